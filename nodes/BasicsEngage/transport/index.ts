import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { asInputFailure, Failure, KINDS, toNodeError } from '../helpers/failure';
import { retriesOption, retryWaitOption } from '../helpers/options';
import { readNumberOption, readOptions, readValidateOnly } from '../helpers/read';
import type { ApiResult, SuccessContract } from './classify';
import { keepServerValues } from './classify';
import type { Endpoint, RunSettings } from './request';
import { openRunMemory, repeatableOf, sendRequest, waitUnlessStopped } from './request';
import { readSettings } from './settings';

export type { ApiResult, SuccessContract };

/**
 * How an operation makes its requests from its items, declared in its own file and read once
 * per run (`options` is its Options collection).
 */
export type DeclareRequests = (this: IExecuteFunctions, options: IDataObject) => OperationRequests;

export interface OperationRequests extends Endpoint {
	/** The item's request body, or with `batches` its entry in one. What it throws fails this item. */
	body: (itemIndex: number) => IDataObject;
	/** Requests that each cover several items; a body is built when its request is sent. */
	batches?: (entries: ItemBody[]) => Planned[];
	/** A success's output json, from the answer and the body sent; the transport redacts it. */
	toJson: (answer: IDataObject, sent: IDataObject, itemIndexes: number[]) => IDataObject;
	/** What a success did, as a run's error lists it: "Queued in this run (item indexes): 0." */
	done: string;
	/**
	 * Requests in flight at once (1 when absent), read before each request: while Add Profiles'
	 * new list does not exist, 1, so the request creating it goes alone and the next waits for
	 * its answer. The output is in input order regardless.
	 */
	readonly concurrency?: number;
	/**
	 * Stands around the run's requests: Add Profiles learns its new list's ID from the request
	 * that created it; Skip Emails Already Sent claims each email just before it is sent.
	 */
	guard?: RequestGuard;
	/**
	 * Puts the execution to wait until then once every request succeeded (Send and Wait), and
	 * outputs the input items instead of the answers.
	 */
	waitTill?: Date;
}

export interface ItemBody {
	itemIndex: number;
	body: IDataObject;
}

/** What a request came to: its body when it was sent, none when answered instead of it. */
export interface Sent {
	result: ApiResult;
	body?: IDataObject;
	/** Why the run sends nothing more, whatever On Error says. */
	stopsRun?: string;
}

/** A request of the run, with what an earlier try of the run answered it (none in a dry run). */
export type GuardedRequest = { itemIndexes: number[]; body: IDataObject; earlier?: ApiResult };
type Sending = Promise<Sent | undefined>;

export interface RequestGuard {
	/** Told each request in order before any is sent: an answer instead of sending it, if any. */
	plan: (request: GuardedRequest) => ApiResult | void;
	/** Around each request: `send` sends it, or gives undefined when the run has stopped. */
	send: (request: GuardedRequest, send: () => Sending) => Sending;
	/** After the run's last request: waits for the guard's writes; a note for items it failed. */
	finish?: () => Promise<Map<number, string>>;
}

/** A request's items and what they came to: an output json, or a failure. */
interface Outcome {
	itemIndexes: number[];
	result: ApiResult;
	/** A batch's output pairs with all its items, even when it has one. */
	batch?: boolean;
}

/**
 * The node's one way to run an operation, normally and as an AI tool. Every input item is read
 * before any request (a bad item costs no quota); then the requests go out, each input item comes
 * back exactly once, paired, in input order, and On Error decides what a failure does.
 * `continueOnFail` is the node's On Error, read by `execute`.
 */
export async function runOperation(
	context: IExecuteFunctions,
	declare: DeclareRequests,
	continueOnFail: boolean,
): Promise<INodeExecutionData[][]> {
	let outcomes: Outcome[] = [];
	try {
		const settings = await readSettings(context);
		const options = readOptions(context, 'options');
		const dryRun = readDryRun(context, options, outcomes);
		const operation = declare.call(context, { ...options, validateOnly: dryRun });
		const planned = readItems(context, operation, outcomes, continueOnFail);
		if (dryRun) {
			// Every check above, no request, nothing recorded; items the run would skip, skipped.
			for (const { itemIndexes, body: build } of planned) {
				const body = build();
				const skipped = operation.guard?.plan({ itemIndexes, body }) as IDataObject | undefined;
				const request = { method: 'POST', path: operation.path, body };
				outcomes.push({
					itemIndexes,
					result: { validateOnly: true, ...(skipped ?? { request }) },
					batch: !!operation.batches,
				});
			}
		} else {
			const memory = openRunMemory(context);
			const run: RunSettings = {
				context,
				settings,
				memory,
				retries: readNumberOption(options, retriesOption),
				waitMs: readNumberOption(options, retryWaitOption),
				stopSignal: context.getExecutionCancelSignal?.(),
				continueOnFail,
			};
			await sendAll(run, operation, planned, outcomes);
			if (!outcomes.some(({ result }) => result instanceof Failure)) {
				const { waitTill } = operation;
				// Before the run forgets its requests: a Retry On Fail after a throw sends nothing again.
				if (waitTill) await context.putExecutionToWait(waitTill);
				memory.forget();
				if (waitTill) {
					return [
						context.getInputData().map((item, index) => ({ ...item, pairedItem: { item: index } })),
					];
				}
			}
		}
	} catch (error) {
		// A setting or a once-per-run parameter that cannot work, found before any request.
		if (!(error instanceof Failure)) {
			// n8n's own errors as they are (NodeOperationError's constructor hands one back unchanged).
			throw error instanceof NodeApiError
				? error
				: new NodeOperationError(context.getNode(), error as Error);
		}
		outcomes = context.getInputData().map((_, item) => ({ itemIndexes: [item], result: error }));
	}
	return [applyOnError(context, outcomes, continueOnFail)];
}

/**
 * Under Stop Workflow the run ends with the first failure in input order, named by its item;
 * under Continue each failure is an error item for each of its inputs, `{ error, details }`.
 */
function applyOnError(
	context: IExecuteFunctions,
	outcomes: Outcome[],
	continueOnFail: boolean,
): INodeExecutionData[] {
	const errorOutput = context.getNode().onError === 'continueErrorOutput';
	outcomes.sort((a, b) => a.itemIndexes[0] - b.itemIndexes[0]);
	// A batch's success comes at its first item; its failures, one per item, each at its own.
	const output = outcomes.flatMap(({ itemIndexes, result, batch }) => {
		if (!(result instanceof Failure)) {
			const pairedItem = batch ? itemIndexes.map((item) => ({ item })) : { item: itemIndexes[0] };
			return [{ at: itemIndexes[0], item: { json: result, pairedItem } }];
		}
		return itemIndexes.map((itemIndex) => {
			if (!continueOnFail) throw toNodeError(context, result, itemIndex);
			const item: INodeExecutionData = {
				json: {
					error: result.message,
					details: {
						kind: result.kind,
						httpCode: result.httpCode === null ? null : Number(result.httpCode),
						description: result.description,
					},
				},
				pairedItem: { item: itemIndex },
			};
			// n8n 2.x routes an item to the error output by its json's keys alone; 1.x only moves items
			// that carry `item.error`, and both then replace the json of an item still carrying it
			// with the bare message. Non-enumerable, it is seen when routing and gone from the copy
			// they route, so `details` survives (test/harness/engine-differences.test.js).
			if (errorOutput) {
				const error = toNodeError(context, result, itemIndex);
				Object.defineProperty(item, 'error', { value: error, enumerable: false });
			}
			return { at: itemIndex, item };
		});
	});
	return output.sort((a, b) => a.at - b.at).map(({ item }) => item);
}

/**
 * Validate Only, read for each item when it is an expression. When in doubt, never send: one
 * item that asks for a dry run makes the run one, and a value that reads as neither true nor
 * false fails its item and makes the run a dry run too.
 */
function readDryRun(
	context: IExecuteFunctions,
	options: IDataObject,
	outcomes: Outcome[],
): boolean {
	const isExpression =
		typeof options.validateOnly === 'string' && options.validateOnly.startsWith('=');
	const itemIndexes = isExpression ? context.getInputData().map((_, itemIndex) => itemIndex) : [0];
	let dryRun = false;
	for (const itemIndex of itemIndexes) {
		try {
			dryRun = readValidateOnly(context, itemIndex) || dryRun;
		} catch (error) {
			outcomes.push({ itemIndexes: [itemIndex], result: asInputFailure(error) });
			dryRun = true;
		}
	}
	return dryRun;
}

/** A planned request: the items it answers for, and its body, built when it is sent. */
interface Planned {
	itemIndexes: number[];
	body: () => IDataObject;
}

/**
 * Reads every item before any request: what a reading throws fails that item. Under Stop
 * Workflow nothing is sent when an item cannot be read, so nothing is half sent.
 */
function readItems(
	context: IExecuteFunctions,
	operation: OperationRequests,
	outcomes: Outcome[],
	continueOnFail: boolean,
): Planned[] {
	const entries: ItemBody[] = [];
	const failed = new Set(outcomes.flatMap(({ itemIndexes }) => itemIndexes));
	context.getInputData().forEach((_, itemIndex) => {
		if (failed.has(itemIndex)) return;
		try {
			entries.push({ itemIndex, body: operation.body(itemIndex) });
		} catch (error) {
			outcomes.push({ itemIndexes: [itemIndex], result: asInputFailure(error) });
		}
	});
	if (outcomes.length > 0 && !continueOnFail) return [];
	return operation.batches
		? operation.batches(entries)
		: entries.map(({ itemIndex, body }) => ({ itemIndexes: [itemIndex], body: () => body }));
}

/**
 * Failures in a row, with no success between them, after which a run stops sending. Each has
 * already had its retries, so five means BasicsEngage is down, not having a bad second; and it
 * keeps a dead server from holding a run of thousands for hours (a 5-minute timeout each).
 */
const GIVE_UP_AFTER = 5;

/**
 * Sends the planned requests, in order, with at most the operation's concurrency in flight; each
 * of their items gets its outcome. Before every `requestsPerBatch`-th request it waits
 * `intervalMs`, as n8n's routing node applies "Request Options > Batching" (a Stop ends the
 * wait). The run stops sending before its last request on a failure that every later request
 * would share (401, 429), the first failure under On Error = Stop Workflow (under Continue only
 * the former), a server that keeps failing, or the execution's Stop.
 */
async function sendAll(
	run: RunSettings,
	operation: OperationRequests,
	toSend: Planned[],
	outcomes: Outcome[],
): Promise<void> {
	const { settings, memory, stopSignal, continueOnFail } = run;
	const { guard } = operation;
	// What an earlier try of this run sent, which the memory answers without a request (asked
	// once per request), is told to the guard first, in order: Add Profiles learns the list that
	// try created, so no second one.
	const requests = toSend.map(({ itemIndexes, body: build }) => {
		const body = build();
		const earlier = memory.answer(itemIndexes, body, repeatableOf(operation, body));
		const instead = guard?.plan({ itemIndexes, body, earlier });
		if (instead) outcomes.push({ itemIndexes, result: instead, batch: !!operation.batches });
		return { itemIndexes, body, build, earlier, instead };
	});
	const planned = requests.filter(({ instead }) => !instead);

	let stoppedBy: { failure: Failure; why: string } | undefined;
	let failuresInARow = 0;
	const stopped = () => stoppedBy !== undefined || stopSignal?.aborted === true;
	const stopFor = (failure: Failure, why: string) => (stoppedBy ??= { failure, why });
	// A failure an earlier try got and that was not sent again stops nothing: a Retry of the
	// execution sends what that try never attempted (and still fails on this item).
	const stopsTheRun = (failure: Failure) =>
		!failure.fromEarlierTry && (!continueOnFail || KINDS[failure.kind].stopTrying !== undefined);

	const send = async (request: (typeof planned)[number]) => {
		const sendIt = async (): Promise<Sent | undefined> => {
			// A Stop while the guard was at work (claiming the email): the request never leaves.
			if (stopped()) return undefined;
			const { itemIndexes, earlier } = request;
			// An earlier try's answer keeps the body the memory knew it by.
			const body = earlier ? request.body : request.build();
			const result = earlier ?? (await sendRequest(run, operation, body, itemIndexes));
			if (!(result instanceof Failure && result.fromEarlierTry)) {
				// Server and network failures in a row; any other answer shows the server is up.
				const serverDown = result instanceof Failure && KINDS[result.kind].serverDown;
				failuresInARow = serverDown ? failuresInARow + 1 : 0;
				if (failuresInARow >= GIVE_UP_AFTER) {
					stopFor(
						result as Failure,
						`${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`,
					);
				}
			}
			return { body, result };
		};
		const sent = await (guard?.send(request, sendIt) ?? sendIt());
		const result = sent?.result;
		if (result instanceof Failure && (sent?.stopsRun || stopsTheRun(result))) {
			// Under Stop Workflow the run stops at the first failure, whatever found it.
			const why = !sent?.body
				? 'an earlier item of this run failed'
				: result.kind === 'quota_exceeded'
					? 'the daily email quota was exceeded earlier in this run'
					: 'an earlier request of this run failed';
			stopFor(result, sent?.stopsRun ?? why);
		}
		return sent;
	};

	const { throttle } = settings;
	// What each started request came to; without `body` when the guard answered instead.
	const sent: Array<Sent | undefined> = new Array(planned.length).fill(undefined);
	const inFlight = new Set<Promise<void>>();
	// What an earlier try did is answered before anything is sent: Add Profiles learns there that
	// its new list may exist already, and sends no batch that would create another.
	const order = [...planned.keys()].sort(
		(a, b) => Number(!planned[a].earlier) - Number(!planned[b].earlier),
	);
	for (let step = 0; step < order.length && !stopped(); step++) {
		const index = order[step];
		if (throttle && step > 0 && step % throttle.requestsPerBatch === 0) {
			await waitUnlessStopped(throttle.intervalMs, stopSignal);
		}
		while (inFlight.size >= (operation.concurrency ?? 1)) await Promise.race(inFlight);
		if (stopped()) break;
		const sending: Promise<void> = send(planned[index]).then((result) => {
			sent[index] = result;
			inFlight.delete(sending);
		});
		inFlight.add(sending);
	}
	await Promise.all(inFlight);
	const notes = (await guard?.finish?.()) ?? new Map<number, string>();
	// A request this try never started: what an earlier try of the run did with it, if anything.
	const came = sent.map((request, at) => {
		const { itemIndexes, body } = planned[at];
		const earlier = request ? undefined : memory.recall(itemIndexes, body);
		return earlier ? { body, result: earlier } : request;
	});

	// What each request came to; an item answered instead of sent (skipped) was no request.
	const results = came.map((request) =>
		request?.body || request?.result instanceof Failure ? request.result : undefined,
	);
	// An unsent item keeps the kind of the failure that stopped the run, so a branch on
	// `details.kind` treats both alike.
	const notSent = new Failure({
		kind: stoppedBy?.failure.kind ?? 'unexpected_response',
		message: `Not sent: ${stoppedBy?.why ?? 'the execution was stopped'}`,
		description: `This item was not sent, so it can be sent again later. First failure: ${stoppedBy?.failure.message ?? 'unknown'}`,
	});
	// Under Stop Workflow the run ends at its first failed item in input order (one not sent
	// included: Add Profiles sends list by list), which says what the others did.
	const inInputOrder = [...planned.keys()].sort(
		(a, b) => planned[a].itemIndexes[0] - planned[b].itemIndexes[0],
	);
	const failed = (at: number) => (came[at]?.result ?? notSent) instanceof Failure;
	const stoppedAt = continueOnFail ? -1 : (inInputOrder.find(failed) ?? -1);
	// That failure says which requests done before it (or in flight beside it) took effect, so a
	// re-run can skip them.
	const runNotes = () => {
		const itemsWhere = (test: (result: ApiResult | undefined, at: number) => boolean) =>
			planned.flatMap(({ itemIndexes }, at) => (test(results[at], at) ? itemIndexes : []));
		const succeeded = itemsWhere((result) => result !== undefined && !(result instanceof Failure));
		const unknown = itemsWhere(
			(result, at) => at !== stoppedAt && result instanceof Failure && result.mayHaveTakenEffect,
		);
		return [
			succeeded.length > 0
				? `${operation.done} in this run (item indexes): ${succeeded.join(', ')}.`
				: 'No other request of this run took effect.',
			unknown.length > 0 ? `May have taken effect (item indexes): ${unknown.join(', ')}.` : '',
		];
	};
	came.forEach((request, at) => {
		const { itemIndexes } = planned[at];
		const result = request?.result ?? notSent;
		if (!(result instanceof Failure)) {
			// Answered by BasicsEngage, or instead of it by the guard (as it is).
			const json = request?.body && operation.toJson(result, request.body, itemIndexes);
			const kept = json ? keepServerValues(json, settings.secrets) : result;
			outcomes.push({ itemIndexes, result: kept, batch: !!operation.batches });
			return;
		}
		const said = [result.description, ...(at === stoppedAt ? runNotes() : [])];
		const description = [...said, notes.get(itemIndexes[0])].filter(Boolean).join(' ');
		outcomes.push({ itemIndexes, result: new Failure({ ...result.toJSON(), description }) });
	});
}
