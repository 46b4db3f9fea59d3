import type { IDataObject } from 'n8n-workflow';

import { Failure, KINDS } from '../helpers/failure';
import { waitUnlessStopped } from '../helpers/wait';
import type { ApiResult } from './classify';
import type { FirstAlone, OperationRequests, Planned, RequestShape, Run, Sent } from './index';
import type { RunMemory } from './memory';
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
 * is sent, so Add Profiles learns there that its new list may exist already; lets the guard
 * answer instead of some; sends the rest; and for those never started, recalls what an earlier
 * try did with them, if anything.
 */
export async function sendAll(
	run: Run,
	memory: RunMemory,
	planned: Planned[],
): Promise<SendReport> {
	const { guard, shape } = run.operation;
	const stage = {
		run,
		memory,
		stop: new RunStop(run),
		fields: new FirstFields(firstAloneOf(shape)),
	};
	const requests: Request[] = planned.map((request) => ({ ...request, part: request.body }));
	answerEarlier(stage, requests);
	for (const request of requests) {
		const instead = request.came ? undefined : guard?.plan(request);
		if (instead) {
			request.came = { result: instead };
			request.instead = true;
		}
	}
	const toSend = requests.filter(({ came }) => !came);
	await sendInOrder(stage, toSend);
	const notes = (await guard?.finish?.()) ?? new Map<number, string>();
	for (const request of toSend) {
		if (request.came) continue;
		request.body = stage.fields.bodyOf(request);
		const earlier = memory.recall(request.itemIndexes, request.body);
		if (earlier) request.came = { body: request.body, result: earlier };
	}
	return { requests, stoppedBy: stage.stop.by, notes };
}

/** The requests an earlier try of the run did, answered as it was (a request that went alone taught). */
function answerEarlier({ run, memory, stop, fields }: Stage, requests: Request[]): void {
	for (const request of requests) {
		request.body = fields.bodyOf(request);
		const { itemIndexes, body } = request;
		const earlier = memory.answer(itemIndexes, body, repeatableOf(run.operation, body));
		if (!earlier) continue;
		request.came = { body, result: earlier };
		const why = fields.alone ? fields.learn(earlier) : undefined;
		if (why) stop.stopFor(earlier as Failure, why);
	}
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
		const result = await sendRequest(run, run.operation, body, memory.unclear(itemIndexes, body));
		memory.remember(itemIndexes, body, result);
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
