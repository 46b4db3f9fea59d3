import type { IExecuteFunctions } from 'n8n-workflow';

import type { ApiResult } from './answers';
import type { ApiFailure, ErrorKind } from './errors';
import { waitUnlessStopped } from './retry';
import type { RequestSettings } from './settings';
import { stopSignal } from './transport';

/**
 * Failures in a row, with no success between them, after which a run stops sending. Each has
 * already had its retries, so five means BasicsEngage is down, not having a bad second; and it
 * keeps a dead server from holding a run of thousands for hours (a 5-minute timeout each).
 */
export const GIVE_UP_AFTER = 5;
const SERVER_DOWN_KINDS: ReadonlySet<ErrorKind> = new Set(['server_error', 'network_error']);

/**
 * Decides when a run stops sending before its last request: a failure that every later request
 * would share (401, 429), the first failure under On Error = Stop Workflow, a server that keeps
 * failing, or the execution's Stop. It then words the failure of every item not sent.
 */
export class RunStop {
	private failuresInARow = 0;

	private cause: ApiFailure | undefined;

	private why: string | undefined;

	private readonly signal: AbortSignal | undefined;

	constructor(context: IExecuteFunctions) {
		this.signal = stopSignal(context);
	}

	get stopped(): boolean {
		return this.why !== undefined || this.signal?.aborted === true;
	}

	/** Stops the run because of this failure, said as `why` to the items not sent. */
	stopFor(failure: ApiFailure, why: string): void {
		if (this.why !== undefined) return;
		this.cause = failure;
		this.why = why;
	}

	/** Counts server and network failures in a row; any other answer shows the server is up. */
	record(result: ApiResult): void {
		if (result.ok || !SERVER_DOWN_KINDS.has(result.failure.kind)) {
			this.failuresInARow = 0;
		} else if (++this.failuresInARow >= GIVE_UP_AFTER) {
			this.stopFor(
				result.failure,
				`${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`,
			);
		}
	}

	/**
	 * The failure of an item this run did not send: it keeps the kind of the failure that stopped
	 * the run, so a branch on `details.kind` treats both alike; `whatNow` says it can be sent again.
	 */
	notSent(whatNow: string): ApiFailure {
		return {
			kind: this.cause?.kind ?? 'unexpected_response',
			httpCode: null,
			mayHaveTakenEffect: false,
			message: `Not sent: ${this.why ?? 'the execution was stopped'}`,
			description: `${whatNow}. First failure: ${this.cause?.message ?? 'unknown'}`,
		};
	}
}

/**
 * n8n's "Request Options > Batching", as its routing node applies it: before every
 * `requestsPerBatch`-th request, wait `intervalMs` (a Stop ends the wait).
 */
export async function paceRequest(
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
 * Runs `send` for each index in order with at most `concurrency` in flight, until the run stops.
 * Indexes never started come back as `undefined`, so the caller decides what their items report.
 */
export async function sendConcurrently<T>(
	context: IExecuteFunctions,
	settings: RequestSettings,
	count: number,
	{
		concurrency,
		stop,
		send,
	}: { concurrency: number; stop: RunStop; send: (index: number) => Promise<T> },
): Promise<Array<T | undefined>> {
	const results: Array<T | undefined> = new Array(count).fill(undefined);
	const inFlight = new Set<Promise<void>>();
	const signal = stopSignal(context);
	for (let index = 0; index < count && !stop.stopped; index++) {
		await paceRequest(settings, index, signal);
		while (inFlight.size >= concurrency) await Promise.race(inFlight);
		if (stop.stopped) break;
		const sending: Promise<void> = send(index).then((result) => {
			results[index] = result;
			inFlight.delete(sending);
		});
		inFlight.add(sending);
	}
	await Promise.all(inFlight);
	return results;
}
