import type {
	DeduplicationScope,
	ICheckProcessedOptions,
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';

import { readNumberOption } from '../../helpers/read';
import type { ApiResult, SkipHook } from '../../transport';
import { Failure, invalidInput } from '../../transport';

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
					displayName:
						'Skips an email BasicsEngage accepted before. One whose earlier answer was lost fails as "outcome unknown", so no recipient gets it twice.',
					name: 'skipNotice',
					type: 'notice',
					default: '',
				},
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
	if (!(result instanceof Failure)) return false;
	return !result.mayHaveTakenEffect || REFUSING_SERVER_ERRORS.has(result.httpCode ?? '');
}

/**
 * The option's hook into the run, or undefined when it is off. Before the first request, the
 * emails accepted before are skipped and those whose earlier outcome is unknown are failed (or
 * sent again, when Retry Send On Server Error allows it). Each email is marked "sending" just
 * before its request and "sent" once accepted; a run that is stopped leaves no mark on emails
 * it never sent.
 */
export function skipAlreadySent(
	context: IExecuteFunctions,
	options: IDataObject,
	sendUnknown: boolean,
): (SkipHook & { readKey: (itemIndex: number, email: IDataObject) => void }) | undefined {
	const settings = (options.skipAlreadySent as { settings?: IDataObject } | undefined)?.settings;
	if (!settings) return undefined;
	const store = new SerialStore(context, {
		scope: settings.scope === 'workflow' ? 'workflow' : 'node',
		options: { mode: 'entries', maxEntries: readNumberOption(settings, historySizeValue) },
	});
	const keys = new Map<number, string>();
	/** Items not handled by an earlier try of this run (those are answered from the run's memory). */
	const fresh = new Set<number>();
	/** Items whose `sending` mark is this run's (or an earlier run's, sent again on purpose). */
	const marked = new Set<number>();
	/** What afterSend stores; the run waits for it before it answers. */
	const settling: Array<Promise<void>> = [];
	return {
		readKey(itemIndex, email) {
			const custom = context.getNodeParameter(
				'options.skipAlreadySent.settings.key',
				itemIndex,
				'',
			);
			const key =
				typeof custom === 'string' || typeof custom === 'number' ? String(custom).trim() : '';
			// Else everything that is sent: a second order confirmation with a new number is another email.
			keys.set(
				itemIndex,
				key !== ''
					? `key:${key}`
					: `email:${JSON.stringify({ ...email, to: String(email.to).toLowerCase() })}`,
			);
		},
		async select(itemIndexes) {
			for (const itemIndex of itemIndexes) fresh.add(itemIndex);
			const distinct = [...new Set([...fresh].map((itemIndex) => keys.get(itemIndex) as string))];
			const known = await store.peek([
				...distinct.map((key) => SENT + key),
				...distinct.map((key) => SENDING + key),
			]);
			const firstWithKey = new Map<string, number>();
			const answered = new Map<number, ApiResult>();
			for (const itemIndex of fresh) {
				const key = keys.get(itemIndex) as string;
				const first = firstWithKey.get(key);
				if (first !== undefined) {
					answered.set(itemIndex, skipped(`item ${first} of this run has the same key`));
				} else if (known.has(SENT + key)) {
					answered.set(itemIndex, skipped('an email with the same key was sent before'));
				} else if (known.has(SENDING + key) && !sendUnknown) {
					answered.set(itemIndex, unknownEarlierOutcome());
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
				return storeFailure(error as Error);
			}
			if (!isNew) return skipped('another execution is sending an email with the same key');
			marked.add(itemIndex);
			return undefined;
		},
		afterSend(itemIndex, result) {
			if (!marked.has(itemIndex)) return;
			const key = keys.get(itemIndex) as string;
			if (result !== undefined && !(result instanceof Failure)) {
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

function skipped(why: string): ApiResult {
	return { skipped: true, reason: `Not sent: ${why} (Skip Emails Already Sent)` };
}

/** An email whose earlier request got no answer that says whether it was queued. */
function unknownEarlierOutcome(): Failure {
	return new Failure({
		kind: 'outcome_unknown',
		message: 'Not sent: an earlier execution sent this email and got no clear answer',
		description:
			'Nobody knows whether BasicsEngage queued it (its answer was lost or timed out, or the run was cut off), so it is not sent again. Check the BasicsEngage dashboard; to send it anyway, run once with Retry Send On Server Error on.',
	});
}

function storeFailure(error: Error): Failure {
	return invalidInput(
		'Not sent: Skip Emails Already Sent could not write to n8n’s deduplication store',
		`n8n said: ${error.message}.`,
	);
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
		private readonly sentKeys: { scope: DeduplicationScope; options: ICheckProcessedOptions },
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
