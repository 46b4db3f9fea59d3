import type { IContextObject, IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { FailureFields } from '../helpers/failure';
import { Failure, KINDS, tookUnclear } from '../helpers/failure';
import { waitUnlessStopped } from '../helpers/wait';
import type { ApiResult } from './classify';
import type { FirstAlone, OperationRequests, Planned, RequestShape, Run, Sent } from './index';
import type { Outcome } from './report';
import { repeatableOf, sendRequest } from './request';

/** A planned request as the send stage keeps it: its body, as sent, and what it came to. */
export interface Request extends Planned {
	/** What the operation planned: the body, or with `firstAlone` the part after its fields. */
	part: IDataObject;
	/** An earlier try's answer, a guard's, or this try's; none when never started. */
	came?: Sent;
	/** Answered by the guard instead of being sent (a skipped email): no request of the run. */
	instead?: boolean;
}

/** What the send stage hands the report: every request, and why the run stopped, if it did. */
export interface SendReport {
	requests: Request[];
	stoppedBy?: { failure: Failure; why: string };
	/** The guard's notes, per first item of a request. */
	notes: Map<number, string>;
}

/**
 * Failures in a row, with no success between them, after which a run stops sending. Each has
 * already had its retries, so five means BasicsEngage is down, not having a bad second; and it
 * keeps a dead server from holding a run of thousands for hours (a 5-minute timeout each).
 */
const GIVE_UP_AFTER = 5;

/**
 * Why the run sends nothing more: a failure that every later request would share (401, 429),
 * the first failure under On Error = Stop Workflow (under Continue only the former), a server
 * that keeps failing, or the execution's Stop.
 */
class RunStop {
	by?: { failure: Failure; why: string };
	private failuresInARow = 0;

	constructor(private readonly run: Run) {}

	get stopped(): boolean {
		return this.by !== undefined || this.run.stopSignal?.aborted === true;
	}

	stopFor(failure: Failure, why: string): void {
		this.by ??= { failure, why };
	}

	/** Server and network failures in a row; any other answer shows the server is up. */
	count(result: ApiResult): void {
		const serverDown = result instanceof Failure && KINDS[result.kind].serverDown;
		this.failuresInARow = serverDown ? this.failuresInARow + 1 : 0;
		if (this.failuresInARow >= GIVE_UP_AFTER) {
			const why = `${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`;
			this.stopFor(result as Failure, why);
		}
	}

	/** A request's failure, sent or answered by the guard, that stops the run. */
	after({ result, body }: Sent): void {
		if (!(result instanceof Failure)) return;
		if (this.run.continueOnFail && KINDS[result.kind].stopTrying === undefined) return;
		const why = !body
			? 'an earlier item of this run failed'
			: result.kind === 'quota_exceeded'
				? 'the daily email quota was exceeded earlier in this run'
				: 'an earlier request of this run failed';
		this.stopFor(result, why);
	}
}

/**
 * The fields of `firstAlone` each body gets: the first request's until one succeeds, then what
 * its answer taught. Without `firstAlone` a body is the one planned.
 */
class FirstFields {
	private learned?: IDataObject;

	constructor(private readonly first: FirstAlone | undefined) {}

	/** Whether the next request goes alone, its answer awaited before the next. */
	get alone(): boolean {
		return this.first !== undefined && this.learned === undefined;
	}

	bodyOf({ part }: Request): IDataObject {
		if (!this.first) return part;
		return { ...(this.learned ?? this.first.fields), ...part };
	}

	/** Learns from the answer of a request that went alone; why the run stops, if it must. */
	learn(result: ApiResult): string | undefined {
		if (!this.first) return undefined;
		// A request that may have taken effect, unanswered (Add Profiles: the list may exist),
		// stops the run: another would do it twice.
		if (result instanceof Failure)
			return result.mayHaveTakenEffect ? this.first.unclear : undefined;
		this.learned = this.first.learn(result);
		return undefined;
	}
}

const firstAloneOf = (shape: RequestShape) =>
	shape.per === 'batch' ? shape.firstAlone : undefined;

/** What the send stage's steps share. */
interface Stage {
	run: Run;
	memory: RunMemory;
	stop: RunStop;
	fields: FirstFields;
}

/**
 * The send stage: answers what an earlier try of the run did (the run's memory) before anything
 * is sent, as it was, so Add Profiles learns there that its new list may exist already; lets the
 * guard answer instead of some; sends the rest; and for those never started, recalls what an
 * earlier try did with them, if anything.
 */
export async function sendAll(
	run: Run,
	memory: RunMemory,
	planned: Planned[],
): Promise<SendReport> {
	const { guard, shape } = run.operation;
	const stop = new RunStop(run);
	const fields = new FirstFields(firstAloneOf(shape));
	const requests: Request[] = planned.map((request) => ({ ...request, part: request.body }));
	for (const request of requests) {
		request.body = fields.bodyOf(request);
		const { itemIndexes, body } = request;
		const repeatable = repeatableOf(run.operation, body);
		const earlier = memory.answer(memory.keyOf(itemIndexes, body), repeatable);
		if (earlier) {
			request.came = { body, result: earlier };
			const why = fields.alone ? fields.learn(earlier) : undefined;
			if (why) stop.stopFor(earlier as Failure, why);
			continue;
		}
		const instead = guard?.plan(request);
		if (instead) {
			request.came = { result: instead };
			request.instead = true;
		}
	}
	const toSend = requests.filter(({ came }) => !came);
	await sendInOrder({ run, memory, stop, fields }, toSend);
	const notes = (await guard?.finish?.()) ?? new Map<number, string>();
	for (const request of toSend) {
		if (request.came) continue;
		request.body = fields.bodyOf(request);
		const earlier = memory.recall(memory.keyOf(request.itemIndexes, request.body));
		if (earlier) request.came = { body: request.body, result: earlier };
	}
	return { requests, stoppedBy: stop.by, notes };
}

/**
 * Sends the requests in order, at most the shape's concurrency in flight, until the run stops.
 * Before every `requestsPerBatch`-th request it waits `intervalMs`, as n8n's routing node
 * applies Request Options > Batching (a Stop ends the wait).
 */
async function sendInOrder(stage: Stage, toSend: Request[]): Promise<void> {
	const { run, stop, fields } = stage;
	const { throttle } = run.settings;
	const { shape } = run.operation;
	const concurrency = shape.per === 'run' ? 1 : shape.concurrency;
	const inFlight = new Set<Promise<void>>();
	for (let step = 0; step < toSend.length && !stop.stopped; step++) {
		if (throttle && step > 0 && step % throttle.requestsPerBatch === 0) {
			await waitUnlessStopped(throttle.intervalMs, run.stopSignal);
		}
		while (inFlight.size >= (fields.alone ? 1 : concurrency)) await Promise.race(inFlight);
		if (stop.stopped) break;
		const sending: Promise<void> = sendOne(stage, toSend[step]).then(() => {
			inFlight.delete(sending);
		});
		inFlight.add(sending);
	}
	await Promise.all(inFlight);
}

/** Sends one request through the guard, if any; the run's memory keeps what it came to. */
async function sendOne({ run, memory, stop, fields }: Stage, request: Request): Promise<void> {
	request.body = fields.bodyOf(request);
	const alone = fields.alone;
	const sendIt = async (): Promise<Sent | undefined> => {
		// A Stop while the guard was at work (claiming the email): the request never leaves.
		if (stop.stopped) return undefined;
		const { itemIndexes, body } = request;
		const key = memory.keyOf(itemIndexes, body);
		const result = await sendRequest(run, run.operation, body, memory.unclear(key));
		memory.remember(key, result);
		stop.count(result);
		return { body, result };
	};
	const { guard } = run.operation;
	const sent = await (guard ? guard.send(request, sendIt) : sendIt());
	if (!sent) return;
	request.came = sent;
	const why = alone ? fields.learn(sent.result) : undefined;
	if (why) stop.stopFor(sent.result as Failure, why);
	stop.after(sent);
}

/** A dry run: every check, no request, nothing recorded; items the run would skip, skipped. */
export function validateOnly(
	{ path, shape, guard }: OperationRequests & { shape: RequestShape },
	planned: Planned[],
): Outcome[] {
	const first = firstAloneOf(shape);
	return planned.map(({ itemIndexes, body: part }, at) => {
		const body = first ? { ...(at === 0 ? first.fields : first.dryRun), ...part } : part;
		const skipped = guard?.plan({ itemIndexes, body }) as IDataObject | undefined;
		const request = { method: 'POST', path, body };
		const result = { validateOnly: true, ...(skipped ?? { request }) };
		return { itemIndexes, result, batch: shape.per !== 'item' };
	});
}

type Records = Record<string, { json: IDataObject } | { failure: FailureFields; attempts: number }>;

/**
 * What the node already did in this execution, so that n8n never makes it do it twice.
 *
 * n8n's node setting Retry On Fail runs the node again, with the same input and the same run
 * index, after it throws, and also when its first output item carries `json.error`
 * (`checkFailure` in n8n-core's workflow-execute), in every On Error mode. The per-execution
 * node context (`getContext('node')`) survives those tries on n8n 1.x and 2.x alike, so the
 * node keeps there what each request did, keyed by run index and items (a Loop Over Items round
 * is a new run index, where item indexes start again). When the node runs as an AI tool, n8n
 * calls `execute` again with a new run index per try: there the key is the request body.
 *
 * A successful run forgets its records, so execution data does not grow with them: only its own,
 * since an AI agent's tool calls run at once and share the context.
 */
export type RunMemory = ReturnType<typeof openRunMemory>;

export function openRunMemory(context: IExecuteFunctions) {
	const store = context.getContext('node') as IContextObject & { basicsEngageDone?: Records };
	const records = (store.basicsEngageDone ??= {});
	// The node's AI tool variant is the same class under the type name n8n derives for it.
	const asTool = context.getNode().type.endsWith('Tool');
	const runIndex = asTool ? 'tool' : String(context.getWorkflowDataProxy(0).$runIndex ?? 0);
	/** The keys this run recalled or remembered: what it may forget. */
	const owned = new Set<string>();
	return {
		/** A request's key in the memory, which the run then owns. */
		keyOf(itemIndexes: number[], body: IDataObject): string {
			const key = `${runIndex}:${asTool ? JSON.stringify(body) : itemIndexes.join(',')}`;
			owned.add(key);
			return key;
		},

		/**
		 * An earlier try's answer to this request, when it is not to be sent again: `recall`'s,
		 * unless the request is repeatable, and then only once more.
		 */
		answer(key: string, repeatable: boolean): ApiResult | undefined {
			const record = records[key];
			if (record && 'attempts' in record && repeatable && record.attempts < 2) return undefined;
			return this.recall(key);
		},

		/** What an earlier try did with this request: its success, or its failure that may have taken effect. */
		recall(key: string): ApiResult | undefined {
			const record = records[key];
			if (!record || 'json' in record) return record?.json;
			return new Failure({
				...record.failure,
				description: `Not sent again: an earlier try of this execution sent it and got no clear answer. ${record.failure.description}`,
			});
		},

		/** An earlier try's failure after which the request may have been taken (tookUnclear). */
		unclear(key: string): Failure | undefined {
			const record = records[key];
			const failure = record && 'failure' in record ? new Failure(record.failure) : undefined;
			return tookUnclear(failure) ? failure : undefined;
		},

		/** Keeps a success, or a failure that may have taken effect; other failures can be repeated. */
		remember(key: string, result: ApiResult): void {
			if (!(result instanceof Failure)) records[key] = { json: result };
			else if (result.mayHaveTakenEffect) {
				const earlier = records[key];
				const attempts = (earlier && 'attempts' in earlier ? earlier.attempts : 0) + 1;
				records[key] = { failure: result.toJSON(), attempts };
			}
		},

		/** Called when the run ends without a failure: nothing will try its requests again. */
		forget(): void {
			for (const key of owned) delete records[key];
		},
	};
}
