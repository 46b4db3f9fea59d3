import type { IDataObject } from 'n8n-workflow';

import { retriesOption, retryWaitOption } from '../helpers/options';
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
export const MAX_RETRY_AFTER_MS = 60_000;

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
