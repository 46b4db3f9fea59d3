import type {
	DeduplicationScope,
	ICheckProcessedOptions,
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';

import type { ApiResult } from '../../shared/answers';
import type { ApiFailure } from '../../shared/errors';
import { invalidInput } from '../../shared/errors';
import type { RunMemory } from '../../shared/once';
import type { Answer, SkipHook } from '../../shared/perItem';
import { readNumberOption } from '../../shared/settings';

const historySizeValue: INodeProperties = {
	displayName: 'History Size',
	name: 'historySize',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1_000_000, numberPrecision: 0 },
	default: 10000,
	description: 'How many emails to remember; the oldest are forgotten first',
};

/**
 * "Skip Emails Already Sent": remembered in n8n's own deduplication store (the one the Remove
 * Duplicates node uses). It lives in n8n's database, so it holds across executions and across
 * the workers of queue mode.
 */
export const skipAlreadySentOption: INodeProperties = {
	displayName: 'Skip Emails Already Sent',
	name: 'skipAlreadySent',
	type: 'fixedCollection',
	placeholder: 'Add Skip Emails Already Sent',
	default: { settings: {} },
	description:
		'Whether to skip an email that BasicsEngage already accepted in an earlier execution of this node or workflow, so a run can be repeated after a failure or a stop. A skipped email costs no quota.',
	options: [
		{
			displayName: 'Settings',
			name: 'settings',
			values: [
				{
					displayName: 'Key',
					name: 'key',
					type: 'string',
					default: '',
					placeholder: 'e.g. {{ $json.orderId }}',
					description:
						'What makes two emails the same. Leave empty for the whole email: recipient, sender, subject, and body or template with its variables.',
				},
				{
					displayName: 'Remember Per',
					name: 'scope',
					type: 'options',
					options: [
						{ name: 'This Node', value: 'node' },
						{ name: 'This Workflow', value: 'workflow' },
					],
					default: 'node',
				},
				historySizeValue,
			],
		},
	],
};

export interface SentKeys {
	scope: DeduplicationScope;
	options: ICheckProcessedOptions;
	/** The item's key: the Key expression's value, else the whole email. */
	keyOf: (itemIndex: number, body: IDataObject) => string;
}

/** The option's settings for this run, or undefined when it is off. */
export function readSentKeys(
	context: IExecuteFunctions,
	options: IDataObject,
): SentKeys | undefined {
	const settings = (options.skipAlreadySent as { settings?: IDataObject } | undefined)?.settings;
	if (!settings) return undefined;
	const scope: DeduplicationScope = settings.scope === 'workflow' ? 'workflow' : 'node';
	const maxEntries = readNumberOption(settings, historySizeValue);
	return {
		scope,
		options: { mode: 'entries', maxEntries },
		keyOf: (itemIndex, body) => {
			const custom = context.getNodeParameter(
				'options.skipAlreadySent.settings.key',
				itemIndex,
				'',
			);
			if (typeof custom === 'string' || typeof custom === 'number') {
				if (String(custom).trim() !== '') return `key:${String(custom).trim()}`;
			}
			// Everything that is sent: a second order confirmation with a new number is another email.
			return `email:${JSON.stringify({ ...body, to: String(body.to).toLowerCase() })}`;
		},
	};
}

/*
 * Two records per email key in the store, so that a later run can tell "sent" from "unknown":
 * - `sent|<key>`: BasicsEngage accepted the email (recorded after its answer);
 * - `sending|<key>`: a request is or was under way (recorded just before it leaves). Removed
 *   once the answer is known, so it outlives the run only when nobody knows whether the email
 *   was queued (a lost answer, a timeout, a crash).
 * n8n's store reads and rewrites one database row per call, so calls from this run go one at a
 * time, and those arriving together are merged into one call.
 */
const SENT = 'sent|';
const SENDING = 'sending|';

/** Server errors that say nothing was queued: the API's own 500 says "retry later". */
const REFUSING_SERVER_ERRORS = new Set(['500', '502', '503']);

/** Whether BasicsEngage provably did not queue the email. */
function notQueued(result: ApiResult | undefined): boolean {
	if (result === undefined) return true;
	if (result.ok) return false;
	const { failure } = result;
	return !failure.mayHaveTakenEffect || REFUSING_SERVER_ERRORS.has(failure.httpCode ?? '');
}

/**
 * The option's hook into the run. Before the first request, the emails accepted before are
 * skipped and those whose earlier outcome is unknown are failed (or sent again, when Retry Send
 * On Server Error allows it). Each email is marked "sending" just before its request and
 * "sent" once accepted; a run that is stopped leaves no mark on emails it never sent.
 */
export function skipAlreadySent(
	context: IExecuteFunctions,
	sentKeys: SentKeys,
	keys: Map<number, string>,
	memory: RunMemory,
	sendUnknown: boolean,
): SkipHook {
	const store = new SerialStore(context, sentKeys);
	/** Items not handled by an earlier try of this run (those are answered from the run's memory). */
	const fresh = new Set<number>();
	/** Items whose `sending` mark is this run's (or an earlier run's, sent again on purpose). */
	const marked = new Set<number>();
	/** What afterSend stores; the run waits for it before it answers. */
	const settling: Array<Promise<void>> = [];
	return {
		async select(pending) {
			for (const { itemIndex, request } of pending) {
				if (!memory.recall(String(itemIndex), request.body)) fresh.add(itemIndex);
			}
			const distinct = [...new Set([...fresh].map((itemIndex) => keys.get(itemIndex) as string))];
			const known = await store.peek([
				...distinct.map((key) => SENT + key),
				...distinct.map((key) => SENDING + key),
			]);
			const firstWithKey = new Map<string, number>();
			const answered = new Map<number, Answer>();
			for (const itemIndex of fresh) {
				const key = keys.get(itemIndex) as string;
				const first = firstWithKey.get(key);
				if (first !== undefined) {
					answered.set(itemIndex, skipped(`item ${first} of this run has the same key`));
				} else if (known.has(SENT + key)) {
					answered.set(itemIndex, skipped('an email with the same key was sent before'));
				} else if (known.has(SENDING + key) && !sendUnknown) {
					answered.set(itemIndex, { failure: UNKNOWN_EARLIER_OUTCOME });
				} else if (known.has(SENDING + key)) {
					marked.add(itemIndex);
				}
				firstWithKey.set(key, first ?? itemIndex);
			}
			return answered;
		},
		async beforeSend(itemIndex) {
			if (!fresh.has(itemIndex) || marked.has(itemIndex)) return undefined;
			let isNew;
			try {
				isNew = await store.record(SENDING + (keys.get(itemIndex) as string));
			} catch (error) {
				return { failure: storeFailure(error as Error) };
			}
			if (!isNew) return skipped('another execution is sending an email with the same key');
			marked.add(itemIndex);
			return undefined;
		},
		afterSend(itemIndex, result) {
			if (!marked.has(itemIndex)) return;
			const key = keys.get(itemIndex) as string;
			if (result?.ok) {
				// `sending` goes only once `sent` is stored: a failed write leaves the email
				// "unknown" for a later run, never unmarked and sent again.
				settling.push(
					store.record(SENT + key).then(
						async () => await store.remove(SENDING + key),
						() => undefined,
					),
				);
			} else if (notQueued(result)) {
				settling.push(store.remove(SENDING + key));
			}
		},
		async flush() {
			await Promise.all(settling);
		},
	};
}

function skipped(why: string): Answer {
	return { json: { skipped: true, reason: `Not sent: ${why} (Skip Emails Already Sent)` } };
}

/** An email whose earlier request got no answer that says whether it was queued. */
const UNKNOWN_EARLIER_OUTCOME: ApiFailure = {
	kind: 'outcome_unknown',
	httpCode: null,
	mayHaveTakenEffect: false,
	message: 'Not sent: an earlier execution sent this email and got no clear answer',
	description:
		'Nobody knows whether BasicsEngage queued it (its answer was lost or timed out, or the run was cut off), so it is not sent again. Check the BasicsEngage dashboard; to send it anyway, run once with Retry Send On Server Error on.',
};

function storeFailure(error: Error): ApiFailure {
	return invalidInput(
		'Not sent: Skip Emails Already Sent could not write to n8n’s deduplication store',
		`n8n said: ${error.message}.`,
	).failure;
}

/**
 * n8n's deduplication store, one call at a time for this run. Records and removals that arrive
 * while a call is under way are merged into the next call of their kind.
 */
class SerialStore {
	private tail: Promise<unknown> = Promise.resolve();

	private readonly open = new Map<
		'record' | 'remove',
		{ keys: string[]; done: Promise<Set<string>> }
	>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly sentKeys: SentKeys,
	) {}

	/** Which keys are in the store, leaving it as it was. */
	async peek(keys: string[]): Promise<Set<string>> {
		if (keys.length === 0) return new Set();
		const { scope, options } = this.sentKeys;
		const helpers = this.context.helpers;
		return await this.call(async () => {
			const answer = await helpers.checkProcessedAndRecord(keys, scope, options);
			// The store has no read-only check: what this call recorded is taken back at once.
			if (answer.new.length > 0) await helpers.removeProcessed(answer.new, scope, options);
			return new Set(answer.processed.map(String));
		}).catch((error: Error) => {
			throw invalidInput(
				'Skip Emails Already Sent could not read n8n’s deduplication store',
				`Nothing was sent. n8n said: ${error.message}.`,
			);
		});
	}

	/** Records the key; true when it was not there before. */
	async record(key: string): Promise<boolean> {
		return !(await this.merged('record', key)).has(key);
	}

	/** A failed removal only leaves the email "unknown" for a later run, which is safe. */
	async remove(key: string): Promise<void> {
		await this.merged('remove', key).catch(() => undefined);
	}

	private merged(kind: 'record' | 'remove', key: string): Promise<Set<string>> {
		let batch = this.open.get(kind);
		if (!batch) {
			const keys: string[] = [];
			const { scope, options } = this.sentKeys;
			const helpers = this.context.helpers;
			const done = this.call(async () => {
				this.open.delete(kind);
				if (kind === 'remove') {
					await helpers.removeProcessed(keys, scope, options);
					return new Set<string>();
				}
				const answer = await helpers.checkProcessedAndRecord(keys, scope, options);
				return new Set(answer.processed.map(String));
			});
			batch = { keys, done };
			this.open.set(kind, batch);
		}
		batch.keys.push(key);
		return batch.done;
	}

	private call<T>(write: () => Promise<T>): Promise<T> {
		const done = this.tail.then(write, write);
		this.tail = done.catch(() => undefined);
		return done;
	}
}
