import type {
	DeduplicationScope,
	ICheckProcessedOptions,
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';

import { readForRun, readNumberOption } from '../../helpers/read';
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
 * n8n's store answers "was it there?" only by recording it, so asking is claiming: an email's two
 * entries are claimed in one call just before it is sent. `sent|<key>` stays; `sending|<key>` is
 * removed once BasicsEngage accepted the email, so it outlives the run only when nobody knows
 * whether the email was queued. Both go when it provably never reached BasicsEngage. Whatever
 * fails, what is left reads "outcome unknown", never "sent": a failed store call can cost a send
 * now, never a send for ever, and never a second one.
 */
const SENT = 'sent|';
const SENDING = 'sending|';

// Emails claimed per call: each call rewrites the whole history; a crash leaves those claimed
// and not yet sent "unknown".
const CLAIM_BATCH = 100;

/** Server errors that say nothing was queued: the API's own 500 says "retry later". */
const REFUSING_SERVER_ERRORS = new Set(['500', '502', '503']);

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
			// Not planned: an earlier try of this run sent it, and the run's memory answers.
			if (!batch) return undefined;
			batch.answers ??= claim(batch.items);
			return (await batch.answers)[batch.items.indexOf(itemIndex)];
		},
		afterSend,
		async flush() {
			// Claimed ahead, never sent (the run stopped): left as they were.
			for (const itemIndex of ours) afterSend(itemIndex, undefined);
			await store.settle();
		},
	};

	function afterSend(itemIndex: number, result: ApiResult | undefined): void {
		if (!ours.delete(itemIndex)) return;
		const key = keys.get(itemIndex) as string;
		if (notQueued(result)) store.release(SENT + key, SENDING + key);
		else if (!(result instanceof Failure)) store.release(SENDING + key);
		else store.keep();
	}

	/** The answer for each item of the batch: undefined to send it. */
	async function claim(batch: number[]): Promise<Array<ApiResult | undefined>> {
		const batchKeys = batch.map((itemIndex) => keys.get(itemIndex) as string);
		let known: Set<string>;
		try {
			known = await store.claim(batchKeys.flatMap((key) => [SENT + key, SENDING + key]));
		} catch (error) {
			return batch.map(() => storeFailure(error as Error));
		}
		return batch.map((itemIndex, index) => {
			const key = batchKeys[index];
			if (!known.has(SENDING + key) && known.has(SENT + key)) {
				store.release(SENDING + key);
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
		'Not sent: Skip Emails Already Sent could not reach n8n’s deduplication store',
		`Nothing was recorded for this email, so a later run sends it. n8n said: ${error.message}.`,
	);
}

/**
 * n8n's deduplication store for this run's entries: one call at a time (each rewrites the row
 * the others read), removals gathered into the next call.
 */
class Store {
	private tail: Promise<unknown> = Promise.resolve();

	/** The entries to remove, one list per email. */
	private released: string[][] = [];

	/** `sending|` entries this run claimed and has neither removed nor kept. */
	private temporary = 0;

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: DeduplicationScope,
		private readonly historySize: number,
	) {}

	/** Records an email's two entries each; answers the entries that were there before. */
	async claim(entries: string[]): Promise<Set<string>> {
		await this.settle();
		const emails = entries.length / 2;
		this.temporary += emails;
		// History Size counts emails: `sending|` entries to be removed must not push any out.
		const options: ICheckProcessedOptions = {
			mode: 'entries',
			maxEntries: this.historySize + this.temporary,
		};
		const { helpers } = this.context;
		const answer = this.serially(
			async () => await helpers.checkProcessedAndRecord(entries, this.scope, options),
		);
		answer.catch(() => (this.temporary -= emails));
		return new Set((await answer).processed.map(String));
	}

	/** Removes an email's entries with the next call; if that fails, the email reads "unknown". */
	release(...entries: string[]): void {
		this.released.push(entries);
	}

	/** An email's `sending|` entry stays (its outcome is unknown) or was never this run's. */
	keep(): void {
		this.temporary--;
	}

	async settle(): Promise<void> {
		const released = this.released.splice(0);
		if (released.length === 0) return;
		const { helpers } = this.context;
		await this.serially(
			async () => await helpers.removeProcessed(released.flat(), this.scope, { mode: 'entries' }),
		).catch(() => undefined);
		this.temporary -= released.length;
	}

	private serially<T>(call: () => Promise<T>): Promise<T> {
		const done = this.tail.then(call, call);
		this.tail = done.catch(() => undefined);
		return done;
	}
}
