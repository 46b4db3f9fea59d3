import type { RequestSettings } from './settings';
import { waitUnlessStopped } from './retries';
import type { RunStop } from './runStop';

/**
 * n8n's "Request Options > Batching", as its routing node applies it: before every
 * `requestsPerBatch`-th request, wait `intervalMs` (a Stop ends the wait).
 */
async function paceRequest(
	settings: RequestSettings,
	requestIndex: number,
	signal: AbortSignal | undefined,
): Promise<void> {
	const { throttle } = settings;
	if (throttle && requestIndex > 0 && requestIndex % throttle.requestsPerBatch === 0) {
		await waitUnlessStopped(throttle.intervalMs, signal);
	}
}

/**
 * Runs `send` for each index in order with at most `concurrency` in flight, until the run stops;
 * one that `alone` claims waits until nothing is in flight, and the next waits for it.
 * Indexes never started come back as `undefined`, so the caller decides what their items report.
 */
export async function sendConcurrently<T>(
	settings: RequestSettings,
	count: number,
	{
		concurrency,
		alone,
		stop,
		signal,
		send,
	}: {
		concurrency: number;
		alone?: () => boolean;
		stop: RunStop;
		signal: AbortSignal | undefined;
		send: (index: number) => Promise<T>;
	},
): Promise<Array<T | undefined>> {
	const results: Array<T | undefined> = new Array(count).fill(undefined);
	const inFlight = new Set<Promise<void>>();
	for (let index = 0; index < count && !stop.stopped; index++) {
		await paceRequest(settings, index, signal);
		const sendsAlone = alone?.() === true;
		while (inFlight.size >= (sendsAlone ? 1 : concurrency)) await Promise.race(inFlight);
		if (stop.stopped) break;
		const sending: Promise<void> = send(index).then((result) => {
			results[index] = result;
			inFlight.delete(sending);
		});
		inFlight.add(sending);
		if (sendsAlone) await sending;
	}
	await Promise.all(inFlight);
	return results;
}
