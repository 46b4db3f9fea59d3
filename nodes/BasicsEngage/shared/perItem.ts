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

/** What the router hands every operation: read once per run, before any item. */
export interface OperationRun {
	/** What earlier tries of this run did (n8n's Retry On Fail). */
	memory: RunMemory;
	/** The credential and the Request Options. */
	settings: RequestSettings;
}

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
export interface PerItemOperation extends RunOptions {
	/** The item's request. What it throws fails this item only, before any request of the run. */
	read: (itemIndex: number) => ApiRequest;
	retryPolicy: RetryPolicy;
}

/** How a run sends its requests and answers for their items. */
export interface RunOptions {
	/** How many requests may be in flight at once; output order is input order regardless. */
	concurrency: number;
	/** The output json of a success. */
	toJson: (body: IDataObject, request: ApiRequest, itemIndexes: number[]) => IDataObject;
	/** What the operation adds to a failure of its request (e.g. Send Campaign's warning). */
	explain?: (failure: ApiFailure, request: ApiRequest) => ApiFailure;
	/** Told each request's result as it comes: why the run must stop now, if it must. */
	afterRequest?: (result: ApiResult, request: ApiRequest) => string | undefined;
	/** Items answered without a request (Send Email's Skip Emails Already Sent). */
	skip?: SkipHook;
	/** A success is paired to a list of items (a request covering several), not to one. */
	pairsMany?: boolean;
	wording: RunWording;
}

/** One request of a run and the input items it answers for. */
export interface PlannedRequest {
	itemIndexes: number[];
	/** Built when it is sent, so it can use what earlier requests answered. */
	build: () => { request: ApiRequest; retryPolicy: RetryPolicy };
}

/** How an item is answered without its request: an output json, or a failure. */
export type Answer = { json: IDataObject } | { failure: ApiFailure };

/** Answers some items without sending them (Send Email's Skip Emails Already Sent). */
export interface SkipHook {
	/** Before any request: the items not to be sent. What it throws fails every item. */
	select: (
		pending: Array<{ itemIndex: number; request: ApiRequest }>,
	) => Promise<Map<number, Answer>>;
	/** Just before the item's request: an answer instead of sending it, or undefined to send. */
	beforeSend: (itemIndex: number) => Promise<Answer | undefined>;
	/** What the request did; undefined when it never left. */
	afterSend: (itemIndex: number, result: ApiResult | undefined) => void;
	/** Waits until what `afterSend` was told is stored. */
	flush: () => Promise<void>;
}

/**
 * Runs a per-item operation: every item is checked before any request (a bad item costs no
 * quota and stops nothing already sent), then one request per item.
 */
export async function runPerItem(
	context: IExecuteFunctions,
	memory: RunMemory,
	settings: RequestSettings,
	operation: PerItemOperation,
): Promise<OperationOutput> {
	const { values, failures } = readItems(context, operation.read);
	const { retryPolicy } = operation;
	const planned = values.map(({ itemIndex, value: request }) => ({
		itemIndexes: [itemIndex],
		build: () => ({ request, retryPolicy }),
	}));
	return await runRequests(context, { memory, settings }, planned, failures, operation);
}

/**
 * The one request loop of the node. The requests go out in order through the run's memory, and
 * each input item comes back exactly once, paired, on the success or error side, in input order.
 * A 401 or 429, a server that keeps failing, or a Stop ends the run; items not sent then say so
 * and can be sent again.
 */
export async function runRequests(
	context: IExecuteFunctions,
	{ memory, settings }: OperationRun,
	planned: PlannedRequest[],
	readFailures: ItemFailure[],
	operation: RunOptions,
): Promise<OperationOutput> {
	const output: OperationOutput = [...readFailures];
	const answer = (itemIndex: number, given: Answer) =>
		output.push(
			'json' in given
				? { json: given.json, pairedItem: { item: itemIndex } }
				: new ItemFailure(given.failure, itemIndex),
		);
	const { skip, explain, afterRequest } = operation;
	let pending = planned;
	if (skip) {
		const answered = await skip.select(
			pending.map(({ itemIndexes, build }) => ({
				itemIndex: itemIndexes[0],
				request: build().request,
			})),
		);
		for (const [itemIndex, given] of answered) answer(itemIndex, given);
		pending = pending.filter(({ itemIndexes }) => !answered.has(itemIndexes[0]));
	}

	const continueOnFail = context.continueOnFail();
	const stop = new RunStop(context);
	/** Requests answered by the skip hook just before they would have been sent. */
	const answeredInstead = new Set<number>();
	const sent: Array<{ request: ApiRequest; result: ApiResult } | undefined> =
		await sendConcurrently(context, settings, pending.length, {
			concurrency: operation.concurrency,
			stop,
			send: async (requestIndex) => {
				const { itemIndexes, build } = pending[requestIndex];
				const instead = await skip?.beforeSend(itemIndexes[0]);
				if (instead) {
					answer(itemIndexes[0], instead);
					answeredInstead.add(requestIndex);
					return undefined;
				}
				// A Stop while the item was being marked: it never leaves.
				if (stop.stopped) {
					skip?.afterSend(itemIndexes[0], undefined);
					return undefined;
				}
				const { request, retryPolicy } = build();
				// Keyed by its items: the same on every try of the run, so Retry On Fail finds it.
				let result = await requestOnce(
					context,
					settings,
					request,
					retryPolicy,
					memory,
					itemIndexes.join(','),
				);
				skip?.afterSend(itemIndexes[0], result);
				if (!result.ok && explain)
					result = { ok: false, failure: explain(result.failure, request) };
				stop.record(result);
				const stopNow = afterRequest?.(result, request);
				if (!result.ok) {
					const why =
						stopNow ??
						(!continueOnFail || RUN_STOPPING_KINDS.has(result.failure.kind)
							? stopReason(result.failure)
							: undefined);
					if (why) stop.stopFor(result.failure, why);
				}
				return { request, result };
			},
		});
	await skip?.flush();

	const results = sent.map((done) => done?.result);
	// Under Stop Workflow the run ends at the first failed request, which says what the others did.
	const stoppedAt = continueOnFail ? -1 : results.findIndex((result) => result?.ok === false);
	const itemsOf = pending.map(({ itemIndexes }) => itemIndexes);
	sent.forEach((done, requestIndex) => {
		const itemIndexes = itemsOf[requestIndex];
		if (done === undefined) {
			if (answeredInstead.has(requestIndex)) return;
			const failure = stop.notSent(operation.wording.notSent);
			output.push(...itemIndexes.map((itemIndex) => new ItemFailure(failure, itemIndex)));
		} else if (done.result.ok) {
			output.push({
				json: operation.toJson(done.result.body, done.request, itemIndexes),
				pairedItem: operation.pairsMany
					? itemIndexes.map((item) => ({ item }))
					: { item: itemIndexes[0] },
			});
		} else {
			const failure =
				requestIndex === stoppedAt
					? withRunNotes(results, stoppedAt, itemsOf, operation.wording)
					: done.result.failure;
			output.push(...itemIndexes.map((itemIndex) => new ItemFailure(failure, itemIndex)));
		}
	});
	// Input order on every output: by each entry's first input item.
	return output.sort((a, b) => pairedTo(a) - pairedTo(b));
}

function pairedTo(entry: OperationOutput[number]): number {
	if (entry instanceof ItemFailure) return entry.itemIndex;
	const { pairedItem } = entry as { pairedItem: { item: number } | Array<{ item: number }> };
	return Array.isArray(pairedItem) ? pairedItem[0].item : pairedItem.item;
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
	itemsOf: number[][],
	wording: RunWording,
): ApiFailure {
	const { failure } = results[failedAt] as { failure: ApiFailure };
	const itemsWhere = (test: (result: ApiResult | undefined, requestIndex: number) => boolean) =>
		itemsOf.flatMap((itemIndexes, requestIndex) =>
			test(results[requestIndex], requestIndex) ? itemIndexes : [],
		);
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
