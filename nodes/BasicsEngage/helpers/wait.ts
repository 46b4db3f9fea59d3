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

/**
 * What `work` comes to, or `aborted()`'s value once `signal` aborts first. The listener goes
 * either way: Node keeps a timeout signal alive while one listens, and a run's Stop signal
 * outlives each of the run's waits.
 */
export async function unlessAborted<T>(
	work: Promise<T>,
	signal: AbortSignal,
	aborted: () => T,
): Promise<T> {
	if (signal.aborted) return aborted();
	let onAbort = () => {};
	const ended = new Promise<T>((resolve) => {
		onAbort = () => resolve(aborted());
		signal.addEventListener('abort', onAbort, { once: true });
	});
	try {
		return await Promise.race([work, ended]);
	} finally {
		signal.removeEventListener('abort', onAbort);
	}
}
