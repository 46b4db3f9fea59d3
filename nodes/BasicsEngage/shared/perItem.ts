import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { ApiResult } from './answers';
import type { ApiFailure } from './errors';
import { RUN_STOPPING_KINDS } from './errors';
import type { RunMemory } from './once';
import { requestOnce } from './once';
import type { OperationOutput } from './output';
import { ItemFailure } from './output';
import { RunStop, sendConcurrently } from './queue';
import type { RetryPolicy } from './retry';
import type { RequestSettings } from './settings';
import type { ApiRequest } from './transport';
import { readItems } from './validation';

/** How an operation's errors name what other requests of the run did. */
export interface RunWording {
	/** e.g. "Queued": "Queued in this run (item indexes): 0, 1." */
	done: string;
	/** e.g. "No other email of this run was queued." */
	noneDone: string;
	/** e.g. "May have been queued": "May have been queued (item indexes): 2." */
	mayHaveBeenDone: string;
	/** Said of an item not sent because a 401 or 429 stopped the run, e.g. "This email was not
	 * sent, so it can be sent again later". */
	notSent: string;
}

/** An operation that sends one request per input item and answers one output item for each. */
export interface PerItemOperation {
	/** The item's request. What it throws fails this item only, before any request of the run. */
	read: (itemIndex: number) => ApiRequest;
	/** How many requests may be in flight at once; output order is input order regardless. */
	concurrency: number;
	retryPolicy: RetryPolicy;
	/** The output json of a success. */
	toJson: (body: IDataObject, request: ApiRequest) => IDataObject;
	/** What the operation adds to a failure of its request (e.g. Send Campaign's warning). */
	explain?: (failure: ApiFailure, request: ApiRequest) => ApiFailure;
	/** Items answered without a request (Send Email's Skip Emails Already Sent). */
	skip?: SkipHook;
	wording: RunWording;
}

/** How an item is answered without its request: an output json, or a failure. */
export type Answer = { json: IDataObject } | { failure: ApiFailure };

/** Answers some items without sending them (Send Email's Skip Emails Already Sent). */
export interface SkipHook {
	/** Before any request: the items not to be sent. What it throws fails every item. */
	select: (pending: PendingRequest[]) => Promise<Map<number, Answer>>;
	/** Just before the item's request: an answer instead of sending it, or undefined to send. */
	beforeSend: (itemIndex: number) => Promise<Answer | undefined>;
	/** What the request did; undefined when it never left. */
	afterSend: (itemIndex: number, result: ApiResult | undefined) => void;
	/** Waits until what `afterSend` was told is stored. */
	flush: () => Promise<void>;
}

export interface PendingRequest {
	itemIndex: number;
	request: ApiRequest;
}

/**
 * Runs a per-item operation: every item is checked before any request (a bad item costs no
 * quota and stops nothing already sent), the requests go out in input order through the run's
 * memory, and each input item comes back exactly once, paired, on the success or error side.
 * A 401 or 429, a server that keeps failing, or a Stop ends the run; items not sent then say so
 * and can be sent again.
 */
export async function runPerItem(
	context: IExecuteFunctions,
	memory: RunMemory,
	settings: RequestSettings,
	operation: PerItemOperation,
): Promise<OperationOutput> {
	const { values, failures } = readItems(context, operation.read);
	const output: OperationOutput = [];
	const answer = (itemIndex: number, given: Answer) => {
		output[itemIndex] =
			'json' in given
				? { json: given.json, pairedItem: { item: itemIndex } }
				: new ItemFailure(given.failure, itemIndex);
	};
	for (const failure of failures) output[failure.itemIndex] = failure;
	let pending = values.map(({ itemIndex, value: request }) => ({ itemIndex, request }));
	const { skip, explain } = operation;
	if (skip) {
		const answered = await skip.select(pending);
		for (const [itemIndex, given] of answered) answer(itemIndex, given);
		pending = pending.filter(({ itemIndex }) => !answered.has(itemIndex));
	}

	const continueOnFail = context.continueOnFail();
	const stop = new RunStop(context);
	const results = await sendConcurrently(context, settings, pending.length, {
		concurrency: operation.concurrency,
		stop,
		send: async (requestIndex): Promise<ApiResult | undefined> => {
			const { itemIndex, request } = pending[requestIndex];
			const instead = await skip?.beforeSend(itemIndex);
			if (instead) {
				answer(itemIndex, instead);
				return undefined;
			}
			// A Stop while the item was being marked: it never leaves.
			if (stop.stopped) {
				skip?.afterSend(itemIndex, undefined);
				return undefined;
			}
			// The item index: the same on every try of the run, so Retry On Fail finds what was done.
			let result = await requestOnce(
				context,
				settings,
				request,
				operation.retryPolicy,
				memory,
				String(itemIndex),
			);
			skip?.afterSend(itemIndex, result);
			if (!result.ok && explain) result = { ok: false, failure: explain(result.failure, request) };
			stop.record(result);
			if (!result.ok && (!continueOnFail || RUN_STOPPING_KINDS.has(result.failure.kind))) {
				stop.stopFor(result.failure, stopReason(result.failure));
			}
			return result;
		},
	});
	await skip?.flush();

	// Under Stop Workflow the run ends at the first failed request, which says what the others did.
	const stoppedAt = continueOnFail ? -1 : results.findIndex((result) => result?.ok === false);
	const requestItemIndexes = pending.map(({ itemIndex }) => itemIndex);
	results.forEach((result, requestIndex) => {
		const itemIndex = requestItemIndexes[requestIndex];
		if (result === undefined) {
			output[itemIndex] ??= new ItemFailure(stop.notSent(operation.wording.notSent), itemIndex);
		} else if (result.ok) {
			output[itemIndex] = {
				json: operation.toJson(result.body, pending[requestIndex].request),
				pairedItem: { item: itemIndex },
			};
		} else {
			const failure =
				requestIndex === stoppedAt
					? withRunNotes(results, stoppedAt, requestItemIndexes, operation.wording)
					: result.failure;
			output[itemIndex] = new ItemFailure(failure, itemIndex);
		}
	});
	return output;
}

function stopReason(failure: ApiFailure): string {
	return failure.kind === 'quota_exceeded'
		? 'the daily email quota was exceeded earlier in this run'
		: 'an earlier request of this run failed';
}

/**
 * The failure that ends a run under "On Error: Stop Workflow". Requests done before it (or in
 * flight beside it) did take effect, and it says which, so a re-run can skip them.
 */
function withRunNotes(
	results: Array<ApiResult | undefined>,
	failedAt: number,
	requestItemIndexes: number[],
	wording: RunWording,
): ApiFailure {
	const { failure } = results[failedAt] as { failure: ApiFailure };
	const itemsWhere = (test: (result: ApiResult | undefined, requestIndex: number) => boolean) =>
		requestItemIndexes.filter((_, requestIndex) => test(results[requestIndex], requestIndex));
	const done = itemsWhere((result) => result?.ok === true);
	const unknown = itemsWhere(
		(result, requestIndex) =>
			requestIndex !== failedAt && result?.ok === false && result.failure.mayHaveTakenEffect,
	);
	const notes = [
		done.length > 0
			? `${wording.done} in this run (item indexes): ${done.join(', ')}.`
			: wording.noneDone,
		unknown.length > 0 ? `${wording.mayHaveBeenDone} (item indexes): ${unknown.join(', ')}.` : '',
	];
	return { ...failure, description: [failure.description, ...notes].filter(Boolean).join(' ') };
}
