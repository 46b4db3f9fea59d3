import type {
	DeduplicationScope,
	ICheckProcessedOptions,
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';

import { readForRun, readNumberOption } from '../../helpers/read';
import type { ApiResult, SkipHook } from '../../transport';
import { Failure } from '../../transport';

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
 * n8n's store answers "was it there?" only by recording it, so asking is claiming: an email's two
 * entries are claimed in one call just before it is sent. `sent|<key>` stays; `sending|<key>` is
 * removed once BasicsEngage accepted the email, so it outlives the run only when nobody knows
 * whether the email was queued. Both go when it provably never reached BasicsEngage. Whatever
 * fails, what is left reads "outcome unknown", never "sent": a failed store call can cost a send
 * now, never a send for ever, and never a second one.
 */
const SENT = 'sent|';
const SENDING = 'sending|';
const ENTRIES_PER_EMAIL = 2;

// Emails claimed per call: each call rewrites the whole history; a crash leaves those claimed
// and not yet answered "unknown".
const CLAIM_BATCH = 100;

/** Server errors that say nothing was queued: the API's own 500 says "retry later". */
const REFUSING_SERVER_ERRORS = new Set(['500', '502', '503']);

/** Tries of the last write of a run's removals before its emails are said to be left "unknown". */
const FINAL_WRITE_TRIES = 3;

/** Whether BasicsEngage provably did not queue the email (undefined: it never left). */
function notQueued(result: ApiResult | undefined): boolean {
	if (result === undefined) return true;
	if (!(result instanceof Failure)) return false;
	return !result.mayHaveTakenEffect || REFUSING_SERVER_ERRORS.has(result.httpCode ?? '');
}

/**
 * The option's hook into the run, or undefined when it is off. `sendUnknown` (Retry Send On
 * Server Error) sends an email whose earlier outcome is unknown instead of failing it.
 */
export function skipAlreadySent(
	context: IExecuteFunctions,
	options: IDataObject,
	sendUnknown: boolean,
): (SkipHook & { readKey: (itemIndex: number, email: IDataObject) => void }) | undefined {
	// Left unread by readOptions: its Key is read per item.
	if (!(options.skipAlreadySent as IDataObject | undefined)?.settings) return undefined;
	const setting = (name: string, itemIndex = 0) =>
		context.getNodeParameter(`options.skipAlreadySent.settings.${name}`, itemIndex, '');
	const store = readForRun(() => {
		const historySize = readNumberOption({ historySize: setting('historySize') }, historySizeValue);
		return new Store(context, setting('scope') === 'workflow' ? 'workflow' : 'node', historySize);
	});
	const keys = new Map<number, string>();
	/** Each planned item's batch, claimed in one store call when its first item is sent. */
	const batchOf = new Map<
		number,
		{ items: number[]; answers?: Promise<Array<ApiResult | undefined>> }
	>();
	/** Items whose entries are this run's to settle once their request is done. */
	const ours = new Set<number>();
	return {
		readKey(itemIndex, email) {
			const custom = setting('key', itemIndex);
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
		plan(itemIndexes) {
			const firstWithKey = new Map<string, number>();
			const answered = new Map<number, ApiResult>();
			const toClaim = itemIndexes.filter((itemIndex) => {
				const key = keys.get(itemIndex) as string;
				const first = firstWithKey.get(key);
				if (first === undefined) {
					firstWithKey.set(key, itemIndex);
					return true;
				}
				answered.set(itemIndex, skipped(`item ${first} of this run has the same key`));
				return false;
			});
			for (let start = 0; start < toClaim.length; start += CLAIM_BATCH) {
				const batch = { items: toClaim.slice(start, start + CLAIM_BATCH) };
				for (const itemIndex of batch.items) batchOf.set(itemIndex, batch);
			}
			return answered;
		},
		async beforeSend(itemIndex) {
			const batch = batchOf.get(itemIndex);
			// Not planned: the run's memory answers it without a request.
			if (!batch) return undefined;
			batch.answers ??= claim(batch.items);
			return (await batch.answers)[batch.items.indexOf(itemIndex)];
		},
		afterSend,
		async flush() {
			// Claimed ahead, never sent (the run stopped): released as never sent.
			for (const itemIndex of ours) afterSend(itemIndex, undefined);
			const unrecorded = await store.writeRemovals();
			return new Map(unrecorded.map((itemIndex) => [itemIndex, UNRECORDED]));
		},
	};

	function afterSend(itemIndex: number, result: ApiResult | undefined): void {
		if (!ours.delete(itemIndex)) return;
		const key = keys.get(itemIndex) as string;
		if (notQueued(result)) store.remove(itemIndex, SENT + key, SENDING + key);
		else if (!(result instanceof Failure)) store.remove(itemIndex, SENDING + key);
		else store.keep();
	}

	/** The answer for each item of the batch: undefined to send it. */
	async function claim(batch: number[]): Promise<Array<ApiResult | undefined>> {
		const batchKeys = batch.map((itemIndex) => keys.get(itemIndex) as string);
		let known: Set<string>;
		try {
			// `sending|` entries last: trimming to History Size takes the oldest first, and must
			// never take the mark of an email in flight.
			known = await store.claim([
				...batchKeys.map((key) => SENT + key),
				...batchKeys.map((key) => SENDING + key),
			]);
		} catch (error) {
			return batch.map(() => storeUnavailable(error as Error));
		}
		return batch.map((itemIndex, index) => {
			const key = batchKeys[index];
			if (!known.has(SENDING + key) && known.has(SENT + key)) {
				store.remove(undefined, SENDING + key);
				return skipped('an email with the same key was sent before');
			}
			if (known.has(SENDING + key) && !sendUnknown) {
				store.keep();
				return unknownEarlierOutcome();
			}
			ours.add(itemIndex);
			return undefined;
		});
	}
}

function skipped(why: string): ApiResult {
	return { skipped: true, reason: `Not sent: ${why} (Skip Emails Already Sent)` };
}

/** How to send an email that reads "outcome unknown", once BasicsEngage shows it never arrived. */
export const RELEASE_UNKNOWN =
	'Check the BasicsEngage dashboard; to send it anyway, run once with Retry Send On Server Error on.';

/** An email whose earlier request got no answer that says whether it was queued. */
function unknownEarlierOutcome(): Failure {
	return new Failure({
		kind: 'outcome_unknown',
		message: 'Not sent: an earlier execution sent this email and got no clear answer',
		description: `Nobody knows whether BasicsEngage queued it (its answer was lost or timed out, or the run was cut off), so it is not sent again. ${RELEASE_UNKNOWN}`,
	});
}

/** Said of a failed email whose "never queued" n8n's store would not take. */
const UNRECORDED = `Skip Emails Already Sent could not record that it was not sent (n8n’s deduplication store failed), so later runs fail it as "outcome unknown". ${RELEASE_UNKNOWN}`;

function storeUnavailable(error: Error): Failure {
	return new Failure({
		kind: 'store_unavailable',
		message: 'Not sent: Skip Emails Already Sent could not reach n8n’s deduplication store',
		description: `Nothing was sent or recorded for this email, so a later run sends it. n8n said: ${error.message}.`,
	});
}

/**
 * One row of n8n's deduplication store, as this n8n process uses it. Each call reads the whole
 * row and writes it back, so two calls at once (two executions of a busy workflow) lose one's
 * writes: every execution of this process queues its calls to the row here, one at a time.
 */
interface Row {
	tail: Promise<unknown>;
	/**
	 * Entries of emails claimed and not yet settled (two each), which History Size must not count:
	 * an email claimed ahead and never sent must not push a sent one out.
	 */
	temporary: number;
}

const rows = new Map<string, Row>();

/** n8n's deduplication store for this run's entries; removals are written promptly, gathered. */
class Store {
	private readonly row: Row;

	/** Removals not yet written, with the item each is for (none: a skipped email's). */
	private removals: Array<{ itemIndex?: number; entries: string[] }> = [];

	/** The write that will take the removals gathered so far, until it starts. */
	private nextWrite: Promise<void> | undefined;

	private lastWrite: Promise<void> = Promise.resolve();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: DeduplicationScope,
		private readonly historySize: number,
	) {
		const rowKey = `${context.getWorkflow().id}|${scope === 'node' ? context.getNode().id : ''}`;
		this.row = rows.get(rowKey) ?? { tail: Promise.resolve(), temporary: 0 };
		rows.set(rowKey, this.row);
	}

	/** Records an email's two entries each; answers the entries that were there before. */
	async claim(entries: string[]): Promise<Set<string>> {
		const answer = this.serially(async () => {
			this.row.temporary += entries.length;
			// History Size counts emails: `sending|` entries to be removed must not push any out.
			const options: ICheckProcessedOptions = {
				mode: 'entries',
				maxEntries: this.historySize + this.row.temporary,
			};
			return await this.context.helpers
				.checkProcessedAndRecord(entries, this.scope, options)
				.catch((error: unknown) => {
					this.row.temporary -= entries.length;
					throw error;
				});
		});
		return new Set((await answer).processed.map(String));
	}

	/** Removes an email's entries with the next write, which is queued now if none waits. */
	remove(itemIndex: number | undefined, ...entries: string[]): void {
		this.removals.push({ itemIndex, entries });
		void this.write();
	}

	/** An email's entries stay: its outcome is unknown, or they were never this run's. */
	keep(): void {
		this.row.temporary -= ENTRIES_PER_EMAIL;
	}

	/** Waits for the removals; answers the items whose removals could still not be written. */
	async writeRemovals(): Promise<number[]> {
		await this.lastWrite;
		for (let tries = 1; tries < FINAL_WRITE_TRIES && this.removals.length > 0; tries++) {
			await this.write();
		}
		return this.removals.flatMap(({ itemIndex }) => (itemIndex === undefined ? [] : [itemIndex]));
	}

	private write(): Promise<void> {
		this.nextWrite ??= this.lastWrite = this.serially(async () => {
			this.nextWrite = undefined;
			const removals = this.removals.splice(0);
			try {
				const entries = removals.flatMap((removal) => removal.entries);
				await this.context.helpers.removeProcessed(entries, this.scope, { mode: 'entries' });
				this.row.temporary -= ENTRIES_PER_EMAIL * removals.length;
			} catch {
				// Kept for the next write; until one succeeds, these emails read "unknown".
				this.removals.unshift(...removals);
			}
		});
		return this.nextWrite;
	}

	private serially<T>(call: () => Promise<T>): Promise<T> {
		const done = this.row.tail.then(call, call);
		this.row.tail = done.catch(() => undefined);
		return done;
	}
}
