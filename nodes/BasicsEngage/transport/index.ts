import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { asInputFailure, Failure } from '../helpers/failure';
import { retriesOption, retryWaitOption } from '../helpers/options';
import { readNumberOption, readOptions, readValidateOnly } from '../helpers/read';
import type { ApiResult, SuccessContract } from './classify';
import type { Outcome } from './report';
import { applyOnError, report } from './report';
import type { Endpoint, RequestSettings, RunSettings } from './request';
import { readSettings } from './request';
import { openRunMemory, sendAll, validateOnly } from './send';

export type { ApiResult, SuccessContract };

/**
 * How an operation makes its requests from its items, declared in its own file and read once
 * per run (`options` is its Options collection, `settings` the run's Request Options).
 */
export type DeclareRequests = (
	this: IExecuteFunctions,
	options: IDataObject,
	settings: RequestSettings,
) => OperationRequests;

export interface OperationRequests extends Endpoint {
	/**
	 * The item's request body, or its entry in a batch's; with `per: 'run'`, the run's, read
	 * once from item 0. What it throws fails the items it stands for.
	 */
	body: (itemIndex: number) => IDataObject;
	/** How the items become requests: one per item, one at a time, when absent. */
	shape?: RequestShape;
	/** A success's output json, from the answer and the body sent; the transport redacts it. */
	toJson: (answer: IDataObject, sent: IDataObject, itemIndexes: number[]) => IDataObject;
	/** What a success did, as a run's error lists it: "Queued in this run (item indexes): 0." */
	done: string;
	/** Stands around each request as it is sent (Skip Emails Already Sent). */
	guard?: RequestGuard;
}

/** How the items become requests; the output is in input order whatever the shape. */
export type RequestShape =
	/** One request per item, `concurrency` in flight at once. */
	| { per: 'item'; concurrency: number }
	/** Requests that each cover several items, from the items' bodies. */
	| {
			per: 'batch';
			batches: (entries: ItemBody[]) => Planned[];
			concurrency: number;
			firstAlone?: FirstAlone;
	  }
	/** One request for every item, made of the first; then the execution waits (Send and Wait). */
	| { per: 'run'; waitTill: Date };

/**
 * The requests go one at a time, each with `fields`, until one succeeds; the rest then go
 * `concurrency` at once, with what that success taught (Add Profiles: a new list, then its ID).
 */
export interface FirstAlone {
	fields: IDataObject;
	learn: (answer: IDataObject) => IDataObject;
	/** What a dry run shows in place of what would be learned. */
	dryRun: IDataObject;
	/** Why the run stops when a request with `fields` may have taken effect, unanswered. */
	unclear: string;
}

export interface ItemBody {
	itemIndex: number;
	body: IDataObject;
}

/** A request of the run: the items it answers for, and its body (with `firstAlone`, a part). */
export interface Planned {
	itemIndexes: number[];
	body: IDataObject;
}

/** What a request came to: its body when it was sent, none when answered instead of it. */
export interface Sent {
	result: ApiResult;
	body?: IDataObject;
}

export interface RequestGuard {
	/** Told each request to send, in order, before any is sent: an answer instead, if any. */
	plan: (request: Planned) => ApiResult | void;
	/** Around each request: `send` sends it, or gives undefined when the run has stopped. */
	send: (request: Planned, send: () => Promise<Sent | undefined>) => Promise<Sent | undefined>;
	/** After the run's last request: waits for the guard's writes; a note for items it failed. */
	finish?: () => Promise<Map<number, string>>;
}

/** What the stages share: the run's settings, read once, and the operation's requests. */
export interface Run extends RunSettings {
	operation: OperationRequests & { shape: RequestShape };
}

/**
 * The node's one way to run an operation, normally and as an AI tool, as a chain of stages:
 * read every item and setting (a bad item costs no quota), plan the requests, send them (send.ts)
 * and report each input item exactly once, paired, in input order (report.ts), where On Error
 * decides what a failure does. `continueOnFail` is the node's On Error, read by `execute`.
 */
export async function runOperation(
	context: IExecuteFunctions,
	declare: DeclareRequests,
	continueOnFail: boolean,
): Promise<INodeExecutionData[][]> {
	let outcomes: Outcome[] = [];
	try {
		const { run, dryRun } = await readRun(context, declare, continueOnFail, outcomes);
		const planned = planRequests(run, outcomes);
		if (dryRun) {
			outcomes.push(...validateOnly(run.operation, planned));
		} else {
			const memory = openRunMemory(context);
			outcomes.push(...report(run, await sendAll(run, memory, planned)));
			const { shape } = run.operation;
			if (!outcomes.some(({ result }) => result instanceof Failure)) {
				// Before the run forgets its request: a Retry On Fail after a throw sends nothing again.
				if (shape.per === 'run') await context.putExecutionToWait(shape.waitTill);
				memory.forget();
				if (shape.per === 'run') {
					const items = context.getInputData();
					return [items.map((item, index) => ({ ...item, pairedItem: { item: index } }))];
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
 * Reads what is the same for every item: settings, options, the operation, and Validate Only,
 * read for each item when it is an expression. When in doubt, never send: one item that asks
 * for a dry run makes the run one, and a value that reads as neither true nor false fails its
 * item and makes the run a dry run too.
 */
async function readRun(
	context: IExecuteFunctions,
	declare: DeclareRequests,
	continueOnFail: boolean,
	outcomes: Outcome[],
): Promise<{ run: Run; dryRun: boolean }> {
	const settings = await readSettings(context);
	const options = readOptions(context, 'options');
	const isExpression =
		typeof options.validateOnly === 'string' && options.validateOnly.startsWith('=');
	const itemCount = isExpression ? context.getInputData().length : 1;
	let dryRun = false;
	for (let itemIndex = 0; itemIndex < itemCount; itemIndex++) {
		try {
			dryRun = readValidateOnly(context, itemIndex) || dryRun;
		} catch (error) {
			outcomes.push({ itemIndexes: [itemIndex], result: asInputFailure(error) });
			dryRun = true;
		}
	}
	const operation = declare.call(context, { ...options, validateOnly: dryRun }, settings);
	const run: Run = {
		context,
		settings,
		operation: { ...operation, shape: operation.shape ?? { per: 'item', concurrency: 1 } },
		retries: readNumberOption(options, retriesOption),
		waitMs: readNumberOption(options, retryWaitOption),
		stopSignal: context.getExecutionCancelSignal?.(),
		continueOnFail,
	};
	return { run, dryRun };
}

/**
 * Reads every item before any request, then plans the requests, each with the items it answers
 * for and its body, in input order. What a reading throws fails the items it stands for; under
 * Stop Workflow nothing is sent when an item cannot be read, so nothing is half sent.
 */
function planRequests({ context, operation, continueOnFail }: Run, outcomes: Outcome[]): Planned[] {
	const failed = new Set(outcomes.flatMap(({ itemIndexes }) => itemIndexes));
	const { shape, body } = operation;
	const entries: ItemBody[] = [];
	// With `per: 'run'`, one body for the whole run, item 0's, read once: every item fails alike
	// when it cannot be read.
	let runBody: IDataObject | Failure | undefined;
	const itemCount = context.getInputData().length;
	for (let itemIndex = 0; itemIndex < itemCount; itemIndex++) {
		if (failed.has(itemIndex)) continue;
		let read = runBody;
		if (read === undefined) {
			try {
				read = body(shape.per === 'run' ? 0 : itemIndex);
			} catch (error) {
				read = asInputFailure(error);
			}
			if (shape.per === 'run') runBody = read;
		}
		if (read instanceof Failure) outcomes.push({ itemIndexes: [itemIndex], result: read });
		else entries.push({ itemIndex, body: read });
	}
	if (outcomes.length > 0 && !continueOnFail) return [];
	if (shape.per === 'batch') return shape.batches(entries);
	if (shape.per === 'item') {
		return entries.map(({ itemIndex, body }) => ({ itemIndexes: [itemIndex], body }));
	}
	const itemIndexes = entries.map(({ itemIndex }) => itemIndex);
	return entries.length > 0 ? [{ itemIndexes, body: entries[0].body }] : [];
}
