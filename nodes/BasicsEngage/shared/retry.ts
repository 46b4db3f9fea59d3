import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { ApiFailure, ApiRequest, ApiResult, RequestSettings } from './transport';
import { apiRequest } from './transport';

export interface RetryPolicy {
	retries: number;
	waitMs: number;
	/** Also retry failures that may have taken effect (5xx, dropped connection, timeout). */
	retryMaybeSent: boolean;
}

const DEFAULT_RETRIES = 2;
const DEFAULT_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;
/** A longer Retry-After than this is not waited for inside a workflow run. */
const MAX_RETRY_AFTER_MS = 60_000;

export const retryOptions: INodeProperties[] = [
	{
		displayName: 'Retries',
		name: 'retries',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 10 },
		default: DEFAULT_RETRIES,
		description: 'How many times to send a failed request again. 0 turns retries off.',
	},
	{
		displayName: 'Retry Wait',
		name: 'retryWait',
		type: 'number',
		typeOptions: { minValue: 0 },
		default: DEFAULT_WAIT_MS,
		description:
			'Milliseconds to wait before the first retry; the wait doubles for each further retry, with some randomness. A Retry-After answer from BasicsEngage takes precedence.',
	},
];

export function readRetryPolicy(
	options: { retries?: number; retryWait?: number },
	retryMaybeSent: boolean,
): RetryPolicy {
	return {
		retries: Math.max(0, Math.floor(options.retries ?? DEFAULT_RETRIES)),
		waitMs: Math.max(0, options.retryWait ?? DEFAULT_WAIT_MS),
		retryMaybeSent,
	};
}

function shouldRetry(failure: ApiFailure, policy: RetryPolicy): boolean {
	if (failure.retry === undefined) return false;
	if (failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS) return false;
	return failure.retry === 'notSent' || policy.retryMaybeSent;
}

/** Exponential backoff with equal jitter, unless the server said how long to wait. */
function waitBeforeRetry(failure: ApiFailure, attempt: number, policy: RetryPolicy): number {
	if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
	const backoff = Math.min(MAX_WAIT_MS, policy.waitMs * 2 ** attempt);
	return backoff / 2 + Math.random() * (backoff / 2);
}

/** Sends one request, retrying as the policy allows; never retries 4xx answers such as 400, 401 or 429. */
export async function requestWithRetries(
	context: IExecuteFunctions,
	settings: RequestSettings,
	request: ApiRequest,
	policy: RetryPolicy,
): Promise<ApiResult> {
	for (let attempt = 0; ; attempt++) {
		const result = await apiRequest(context, settings, request);
		if (result.ok || attempt >= policy.retries || !shouldRetry(result.failure, policy)) {
			return result;
		}
		await sleep(waitBeforeRetry(result.failure, attempt, policy));
	}
}
