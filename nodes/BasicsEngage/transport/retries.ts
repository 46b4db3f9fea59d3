import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { readNumberOption } from '../helpers/read';
import type { Failure } from './failure';

/** The Retries options, read once per run. */
export interface RetryPolicy {
	retries: number;
	waitMs: number;
}

/** The backoff never grows past this between two tries. */
const MAX_BACKOFF_MS = 30_000;
/** A longer Retry-After than this is not waited for inside a workflow run. */
const MAX_RETRY_AFTER_MS = 60_000;

const retriesOption: INodeProperties = {
	displayName: 'Retries',
	name: 'retries',
	type: 'number',
	typeOptions: { minValue: 0, maxValue: 10, numberPrecision: 0 },
	default: 2,
	description: 'How many times to send a failed request again. 0 turns retries off.',
};

const retryWaitOption: INodeProperties = {
	displayName: 'Retry Wait',
	name: 'retryWait',
	type: 'number',
	typeOptions: { minValue: 0, maxValue: 60_000 },
	default: 1000,
	description:
		'Milliseconds to wait before the first retry (at most 60,000); the wait doubles for each further retry, with some randomness. A Retry-After answer from BasicsEngage takes precedence.',
};

export const retryOptions: INodeProperties[] = [retriesOption, retryWaitOption];

/**
 * The retry options of an operation whose request is never sent again once it may have reached
 * BasicsEngage (creating a list or a campaign, sending a campaign): not `repeatable`.
 */
export function retryOptionsUntilSent(consequence: string): INodeProperties[] {
	return [
		{
			...retriesOption,
			description: `How many times to send a request again when it provably never reached BasicsEngage (connection refused, address not found). Never after a server error, a dropped connection or a timeout: ${consequence}. 0 turns retries off.`,
		},
		retryWaitOption,
	];
}

export function readRetryPolicy(options: IDataObject): RetryPolicy {
	return {
		retries: readNumberOption(options, retriesOption),
		waitMs: readNumberOption(options, retryWaitOption),
	};
}

/** Whether to send again: never a refusal (400, 401, 429), a redirect or a broken contract. */
export function shouldRetry(failure: Failure, repeatable: boolean): boolean {
	if (failure.retry === undefined) return false;
	if (failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS) return false;
	return failure.retry === 'notSent' || repeatable;
}

/** Exponential backoff with equal jitter, unless the server said how long to wait. */
export function waitBeforeRetry(failure: Failure, attempt: number, policy: RetryPolicy): number {
	if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
	const backoff = Math.min(MAX_BACKOFF_MS, policy.waitMs * 2 ** attempt);
	return backoff / 2 + Math.random() * (backoff / 2);
}

/**
 * Waits, but not past a Stop: n8n abandons a stopped node without ending its promise, so the
 * node's own waits must end themselves (n8n-workflow's `sleep` cannot be cancelled).
 */
export async function waitUnlessStopped(
	ms: number,
	signal: AbortSignal | undefined,
): Promise<void> {
	if (ms <= 0 || signal?.aborted) return;
	// Whole milliseconds within a timer's range, as AbortSignal.timeout requires.
	const timeout = AbortSignal.timeout(Math.min(Math.ceil(ms), 2 ** 31 - 1));
	const ends = signal ? AbortSignal.any([signal, timeout]) : timeout;
	await new Promise((resolve) => ends.addEventListener('abort', resolve, { once: true }));
}
