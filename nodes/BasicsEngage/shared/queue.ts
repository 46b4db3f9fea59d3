import type { IExecuteFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { RunMemory } from './once';
import { requestOnce } from './once';
import type { RetryPolicy } from './retry';
import type { ApiResult } from './answers';
import type { ApiFailure } from './errors';
import type { RequestSettings } from './settings';
import type { ApiRequest } from './transport';

/**
 * n8n's "Request Options > Batching", as its routing node applies it: before every
 * `requestsPerBatch`-th request, wait `intervalMs`.
 */
export async function paceRequest(settings: RequestSettings, requestIndex: number): Promise<void> {
	const { throttle } = settings;
	if (throttle && requestIndex > 0 && requestIndex % throttle.requestsPerBatch === 0) {
		await sleep(throttle.intervalMs);
	}
}

/**
 * Sends the requests in input order with at most `concurrency` in flight. Once `stopAfter`
 * says a failure ends the run, nothing more is launched; requests never sent come back as
 * `undefined`, so the caller decides what each of their items reports.
 */
export async function sendConcurrently(
	context: IExecuteFunctions,
	settings: RequestSettings,
	requests: ApiRequest[],
	{
		concurrency,
		retryPolicy,
		stopAfter,
		memory,
		itemKeys,
	}: {
		concurrency: number;
		retryPolicy: RetryPolicy;
		stopAfter: (failure: ApiFailure) => boolean;
		memory: RunMemory;
		/** Each request's key in the run's memory (its item index). */
		itemKeys: string[];
	},
): Promise<Array<ApiResult | undefined>> {
	const results: Array<ApiResult | undefined> = new Array(requests.length).fill(undefined);
	const inFlight = new Set<Promise<void>>();
	let stopped = false;

	for (let index = 0; index < requests.length; index++) {
		await paceRequest(settings, index);
		while (inFlight.size >= concurrency) await Promise.race(inFlight);
		if (stopped) break;
		const sending: Promise<void> = requestOnce(
			context,
			settings,
			requests[index],
			retryPolicy,
			memory,
			itemKeys[index],
		).then((result) => {
			results[index] = result;
			if (!result.ok && stopAfter(result.failure)) stopped = true;
			inFlight.delete(sending);
		});
		inFlight.add(sending);
	}
	await Promise.all(inFlight);
	return results;
}
