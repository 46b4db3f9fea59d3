import type { ApiResult } from './classify';
import type { ErrorKind } from './failure';
import { Failure } from './failure';

/**
 * Failures in a row, with no success between them, after which a run stops sending. Each has
 * already had its retries, so five means BasicsEngage is down, not having a bad second; and it
 * keeps a dead server from holding a run of thousands for hours (a 5-minute timeout each).
 */
export const GIVE_UP_AFTER = 5;
const SERVER_DOWN_KINDS: ReadonlySet<ErrorKind> = new Set([
	'server_error',
	'network_error',
	'rate_limited',
]);

/**
 * Decides when a run stops sending before its last request: a failure that every later request
 * would share (401, 429), the first failure under On Error = Stop Workflow, a server that keeps
 * failing, or the execution's Stop. It then words the failure of every item not sent.
 */
export class RunStop {
	private failuresInARow = 0;

	private cause: Failure | undefined;

	private why: string | undefined;

	constructor(private readonly signal: AbortSignal | undefined) {}

	get stopped(): boolean {
		return this.why !== undefined || this.signal?.aborted === true;
	}

	/** Stops the run because of this failure, said as `why` to the items not sent. */
	stopFor(failure: Failure, why: string): void {
		if (this.why !== undefined) return;
		this.cause = failure;
		this.why = why;
	}

	/** Counts server and network failures in a row; any other answer shows the server is up. */
	record(result: ApiResult): void {
		if (!(result instanceof Failure) || !SERVER_DOWN_KINDS.has(result.kind)) {
			this.failuresInARow = 0;
		} else if (++this.failuresInARow >= GIVE_UP_AFTER) {
			this.stopFor(result, `${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`);
		}
	}

	/**
	 * The failure of an item this run did not send: it keeps the kind of the failure that stopped
	 * the run, so a branch on `details.kind` treats both alike.
	 */
	notSent(): Failure {
		return new Failure({
			kind: this.cause?.kind ?? 'unexpected_response',
			message: `Not sent: ${this.why ?? 'the execution was stopped'}`,
			description: `This item was not sent, so it can be sent again later. First failure: ${this.cause?.message ?? 'unknown'}`,
		});
	}
}
