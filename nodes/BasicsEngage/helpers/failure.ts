import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

/**
 * The node's one failure: thrown by what reads an item or a setting, handed back for a request
 * that failed, and carried by the item it fails. It never ends a run under On Error = Continue.
 */
export class Failure extends Error {
	readonly kind!: ErrorKind;

	/** What happened and what to do, shown under the message. */
	readonly description!: string;

	/** HTTP status as a string (n8n's convention for `httpCode`), null when no answer came. */
	readonly httpCode: string | null = null;

	/** The request reached BasicsEngage and may have taken effect (queued, created, started). */
	readonly mayHaveTakenEffect: boolean = false;

	/**
	 * Whether sending again can help: `notSent` when the request provably never left for
	 * BasicsEngage (connection refused, DNS failure), `maybeSent` when it may have taken effect
	 * but a retry is reasonable (5xx, dropped connection, timeout). Absent: never retried.
	 */
	readonly retry?: 'notSent' | 'maybeSent';

	/** What the server's Retry-After header asked for, in ms. */
	readonly retryAfterMs?: number;

	/** Without a message, the kind's own (KINDS). */
	constructor({ message, ...fields }: Omit<FailureFields, 'message'> & { message?: string }) {
		super(message ?? KINDS[fields.kind].message);
		Object.assign(this, fields);
	}

	/** Its fields as plain data, e.g. to keep in n8n's execution data. */
	toJSON(): FailureFields {
		return { ...this, message: this.message };
	}
}

export type FailureFields = Pick<Failure, 'kind' | 'message' | 'description'> &
	Partial<Pick<Failure, 'httpCode' | 'mayHaveTakenEffect' | 'retry' | 'retryAfterMs'>>;

/**
 * Whether the request may have been taken with no clear answer (a 504, a timeout, a lost answer, a
 * redirect): not after a refusal, nor the API's 500 ("retry later") or a proxy's 502 or 503.
 */
export function tookUnclear(result: unknown): result is Failure {
	if (!(result instanceof Failure)) return false;
	return result.mayHaveTakenEffect && !['500', '502', '503'].includes(result.httpCode ?? '');
}

/** An input or setting that cannot work, refused before anything is sent. */
export function invalidInput(message: string, description: string): Failure {
	return new Failure({ kind: 'invalid_input', message, description });
}

/**
 * What each kind says. `cause` is n8n's `failure.cause`, which tells n8n (and AI agents) why a
 * node failed. `nextStep` is said once in a thrown failure's message: n8n 2.x's AI Agent hands a
 * model only that (an item's error keeps it in `details.description`, which an agent reads along).
 * `stopTrying` is said in the description of a refusal that every later request of the run would
 * get too, so none is sent, and a model does not loop on it. `serverDown` kinds count toward a
 * run's giving up (GIVE_UP_AFTER in transport/send.ts).
 */
const fixFirst = { cause: 'configuration-invalid', nextStep: 'Fix it before trying again.' };
const kinds = {
	invalid_input: { message: 'Invalid input', ...fixFirst },
	invalid_request: { message: 'BasicsEngage rejected the request', ...fixFirst },
	invalid_api_key: {
		message: 'BasicsEngage rejected the API key',
		cause: 'credential-invalid',
		nextStep: 'Do not try again until the API key is fixed.',
		stopTrying:
			'Do not try again: every request fails until the API key in the credential is fixed.',
	},
	quota_exceeded: {
		message: 'The daily email quota of BasicsEngage is used up',
		cause: 'quota-exhausted',
		nextStep: 'Do not try again today.',
		stopTrying:
			'Do not try again today: BasicsEngage refuses every further email until the daily quota resets.',
	},
	rate_limited: {
		message: 'BasicsEngage is limiting the rate of requests',
		cause: 'temporarily-unavailable',
		serverDown: true,
	},
	server_error: {
		message: 'BasicsEngage could not handle the request',
		cause: 'temporarily-unavailable',
		serverDown: true,
	},
	store_unavailable: {
		message: 'Not sent: Skip Emails Already Sent could not use n8n’s deduplication store',
		cause: 'temporarily-unavailable',
	},
	credential_unavailable: {
		message: 'Not sent: n8n could not read the BasicsEngage credential',
		cause: 'temporarily-unavailable',
	},
	network_error: { message: 'BasicsEngage could not be reached', serverDown: true },
	unexpected_response: { message: 'BasicsEngage answered unexpectedly' },
	outcome_unknown: {
		message: 'Not sent: an earlier execution sent this email and got no clear answer',
	},
} satisfies Record<string, KindWords>;

/** Machine-readable failure kinds that users branch on (IF/Switch on `details.kind`). */
export type ErrorKind = keyof typeof kinds;

export const KINDS: Record<ErrorKind, KindWords> = kinds;

type KindWords = Record<'message', string> &
	Partial<Record<'cause' | 'nextStep' | 'stopTrying', string> & { serverDown: true }>;

/** What a reading threw, as a failure: n8n's own errors (an expression that fails) included. */
export function asInputFailure(error: unknown): Failure {
	if (error instanceof Failure) return error;
	const { message, description } = error as { message?: string; description?: string };
	return invalidInput(
		message ?? 'A parameter could not be read for this item',
		description ?? 'Check the expressions in the node parameters for this item.',
	);
}

/** The error n8n shows when the user chose On Error = Stop Workflow. */
export function toNodeError(
	context: IExecuteFunctions,
	failure: Failure,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	// With what to do, once.
	const { nextStep: step, cause } = KINDS[failure.kind];
	const { message: text } = failure;
	const said = !step || text.toLowerCase().includes(step.slice(0, -1).toLowerCase());
	const message = said ? text : `${text}${/[.!?]$/.test(text) ? '' : '.'} ${step}`;
	const options = {
		message,
		description: `${failure.description} (kind: ${failure.kind})`,
		itemIndex,
	};
	const error =
		failure.httpCode === null
			? new NodeOperationError(context.getNode(), message, options)
			: new NodeApiError(
					context.getNode(),
					{ message, description: failure.description, httpCode: failure.httpCode },
					{ ...options, httpCode: failure.httpCode },
				);
	// n8n swaps a message holding a word such as ECONNRESET or EPERM (server text can) for stock text.
	error.message = message;
	// Assigned, not passed as an option: n8n-workflow 1.x ignores the option.
	if (cause) error.failure = { cause } as NodeApiError['failure'];
	return error;
}
