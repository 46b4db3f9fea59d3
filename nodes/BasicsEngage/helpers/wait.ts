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
