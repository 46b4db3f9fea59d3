import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { Failure, tookUnclear } from '../../helpers/failure';
import { readForRun, readNumberOption } from '../../helpers/read';
import { unlessAborted, waitUnlessStopped } from '../../helpers/wait';
import type { ApiResult, Planned, RequestGuard, Sent } from '../../transport';
import { ClaimWrittenOver, DeduplicationStore } from './deduplicationStore';

const historySizeValue: INodeProperties = {
	displayName: 'History Size',
	name: 'historySize',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1_000_000, numberPrecision: 0 },
	default: 10000,
	description: 'How many emails to remember; the oldest are forgotten first',
};

/** Kept in n8n's deduplication store (Remove Duplicates' own), in its database: shared by workers. */
export const skipAlreadySentOption: INodeProperties = {
	displayName: 'Skip Emails Already Sent',
	name: 'skipAlreadySent',
	type: 'fixedCollection',
	placeholder: 'Add Skip Emails Already Sent',
	default: { settings: {} },
	description:
		'Whether to skip an email that BasicsEngage already accepted in an earlier execution of this node or workflow, so a run can be repeated after a failure or a stop. One whose earlier answer was lost fails as "outcome unknown", so no recipient gets it twice.',
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

/*
 * n8n's store answers "was it there?" only by recording it, so asking is claiming: an email's two
 * entries are claimed just before it is sent. `sent|<key>` stays; `sending|<key>` goes once the
 * email was accepted, both when it provably never arrived. Whatever fails, what is left reads
 * "outcome unknown", never "sent": a failed store call can cost a send now, never a second one.
 */
const SENT = 'sent|';
const SENDING = 'sending|';
/** Written once a run gave up on the email's answer: no worker is sending it any more. */
const UNKNOWN = 'unknown|';

// Emails claimed per call (each rewrites the whole row); a crash leaves those unanswered "unknown".
const CLAIM_BATCH = 100;

/**
 * How long an email found in flight on another worker is waited for, beyond the request's own
 * Timeout (its removal is written within a second), and the first pause before asking the store
 * again: each pause twice the one before, as every question rewrites the row others write too.
 */
const WAIT_BEYOND_TIMEOUT_MS = 2000;
const MAX_WAIT_MS = 15_000;
const FIRST_PAUSE_MS = 250;

/** A request's result, or undefined: it never left (or, before sending, is to be sent). */
type Answer = ApiResult | undefined;

/** Whether BasicsEngage provably did not queue the email: the API's own 500 says "retry later". */
function notQueued(result: Answer): boolean {
	return result instanceof Failure ? !tookUnclear(result) : result === undefined;
}

/**
 * The option's guard of the run's requests, or undefined when it is off. `sendUnknown` (Retry
 * Send On Server Error) sends an email whose earlier outcome is unknown instead of failing it;
 * `timeoutMs` is the request Timeout, which bounds the wait for an email in flight elsewhere.
 */
export function skipAlreadySent(
	context: IExecuteFunctions,
	options: IDataObject,
	sendUnknown: boolean,
	timeoutMs: number,
): SkipAlreadySent | undefined {
	// Left unread by readOptions: its Key is read per item.
	if (!(options.skipAlreadySent as IDataObject | undefined)?.settings) return undefined;
	return new SkipAlreadySent(context, sendUnknown, timeoutMs);
}

class SkipAlreadySent implements RequestGuard {
	private readonly store: DeduplicationStore;
	/** How long an email in flight on another worker is waited for. */
	private readonly waitMs: number;
	private readonly keys = new Map<number, string>();
	private readonly firstWithKey = new Map<string, number>();
	/** Each planned item's batch, claimed in one store call when its first item is sent. */
	private readonly batchOf = new Map<number, { items: number[]; answers?: Promise<Answer[]> }>();
	private filling: { items: number[] } = { items: [] };
	/** The execution's Stop, which ends every wait of the option. */
	private readonly stop: AbortSignal | undefined;
	/** Items found in flight on another worker, waited for. */
	private readonly waited = new Set<number>();
	/** Each claimed item's token, removed with its entries. */
	private readonly tokens = new Map<number, string>();
	/** Items whose entries are this run's to settle, and how each tells its copies elsewhere. */
	private readonly ours = new Map<number, (result: Answer) => void>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly sendUnknown: boolean,
		timeoutMs: number,
	) {
		this.waitMs = Math.min(timeoutMs + WAIT_BEYOND_TIMEOUT_MS, MAX_WAIT_MS);
		this.store = readForRun(() => {
			const size = this.setting('historySize');
			const historySize = readNumberOption({ historySize: size }, historySizeValue);
			const scope = this.setting('scope') === 'workflow' ? 'workflow' : 'node';
			// Two entries an email at most, and a claim's worth more: History Size's emails stay.
			const maxEntries = 2 * (historySize + CLAIM_BATCH);
			return new DeduplicationStore(context, scope, maxEntries);
		});
		this.stop = context.getExecutionCancelSignal?.();
	}

	private setting(name: string, itemIndex = 0) {
		const path = `options.skipAlreadySent.settings.${name}`;
		return this.context.getNodeParameter(path, itemIndex, '');
	}

	/** Read with the item, so a Key expression that fails fails this item only. */
	readKey(itemIndex: number, email: IDataObject): void {
		const custom = this.setting('key', itemIndex);
		const key = ['string', 'number'].includes(typeof custom) ? String(custom).trim() : '';
		// Else all that is sent: a second order confirmation with a new number is another email.
		const whole = JSON.stringify({ ...email, to: String(email.to).toLowerCase() });
		this.keys.set(itemIndex, key !== '' ? `key:${key}` : `email:${whole}`);
	}

	/** Told only what is to be sent: what the run's memory answers stays unclaimed. */
	plan({ itemIndexes: [itemIndex] }: Planned): ApiResult | undefined {
		const key = this.keys.get(itemIndex) as string;
		const first = this.firstWithKey.get(key);
		if (first !== undefined) return skipped(`item ${first} of this run has the same key`);
		this.firstWithKey.set(key, itemIndex);
		if (this.filling.items.length === CLAIM_BATCH) this.filling = { items: [] };
		this.filling.items.push(itemIndex);
		this.batchOf.set(itemIndex, this.filling);
		return undefined;
	}

	async send(
		{ itemIndexes: [itemIndex] }: Planned,
		sendEmail: () => Promise<Sent | undefined>,
	): Promise<Sent | undefined> {
		const batch = this.batchOf.get(itemIndex);
		if (batch) {
			batch.answers ??= this.claim(batch.items);
			const instead = (await batch.answers)[batch.items.indexOf(itemIndex)];
			if (instead) return { result: instead };
		}
		const sent = await sendEmail();
		this.settle(itemIndex, sent?.result);
		return sent;
	}

	async finish(): Promise<Map<number, string>> {
		// Claimed ahead, never sent (the run stopped): released as never sent.
		for (const itemIndex of [...this.ours.keys()]) this.settle(itemIndex, undefined);
		return new Map((await this.store.flush()).map((itemIndex) => [itemIndex, UNRECORDED]));
	}

	/** Settles a claimed email's entries by what its request came to. */
	private settle(itemIndex: number, result: Answer): void {
		const told = this.ours.get(itemIndex);
		if (!told) return;
		this.ours.delete(itemIndex);
		told(result);
		const key = this.keys.get(itemIndex) as string;
		const token = this.tokens.get(itemIndex);
		if (notQueued(result)) {
			this.store.remove(itemIndex, [SENT + key, SENDING + key, UNKNOWN + key], token);
		} else if (!(result instanceof Failure)) {
			this.store.remove(itemIndex, [SENDING + key, UNKNOWN + key], token);
		} else {
			this.store.mark([UNKNOWN + key]);
			if (token) this.store.discard([token]);
		}
	}

	/** Claims the emails, sent from here once each answer is undefined. */
	private async claim(batch: number[]): Promise<Answer[]> {
		const answers = new Map<number, Answer>();
		// Counted from the first sight of an email in flight elsewhere, not from the claim (a busy
		// store's calls take turns in this process, and may take long).
		let deadline = Infinity;
		let pauseMs = FIRST_PAUSE_MS;
		// A Stop ends the wait: what is left unanswered never leaves (the run sends nothing more).
		for (let toClaim = batch; toClaim.length > 0 && !this.stop?.aborted; ) {
			const batchKeys = toClaim.map((itemIndex) => this.keys.get(itemIndex) as string);
			// `sending|` last: History Size trims the oldest first, never the mark of an email in flight.
			const entries = [SENT, SENDING].flatMap((prefix) => batchKeys.map((key) => prefix + key));
			const claim = await this.store.claim(entries, toClaim.length).catch((error: Error) => error);
			if (claim instanceof Error) {
				for (const itemIndex of toClaim) answers.set(itemIndex, storeUnavailable(claim));
				break;
			}
			const { known } = claim;
			const inFlight = toClaim.filter((itemIndex, index) => {
				const key = batchKeys[index];
				const token = claim.tokens[index];
				if (known.has(SENDING + key)) {
					// Its entries were there: the token alone was this claim's, and `sent|` if History
					// Size had trimmed it: written again, it would outlive `sending|` and read "sent
					// before". Kept when this run may send the email (Retry Send On Server Error).
					this.store.discard([token]);
					if (!known.has(SENT + key) && !this.sendUnknown)
						this.store.remove(undefined, [SENT + key]);
					return true;
				}
				if (known.has(SENT + key)) {
					this.store.remove(undefined, [SENDING + key], token);
					answers.set(itemIndex, skipped('an email with the same key was sent before'));
				} else this.claimed(itemIndex, key, token);
				return false;
			});
			if (inFlight.length > 0 && deadline === Infinity) deadline = Date.now() + this.waitMs;
			toClaim = await this.waitForOthers(inFlight, answers, Date.now() < deadline);
			if (toClaim.length > 0)
				await waitUnlessStopped(Math.min(pauseMs, deadline - Date.now()), this.stop);
			pauseMs *= 2;
		}
		return batch.map((itemIndex) => answers.get(itemIndex));
	}

	/** The email is this run's to send: its copies in this process wait for its answer. */
	private claimed(itemIndex: number, key: string, token?: string): void {
		if (token) this.tokens.set(itemIndex, token);
		this.store.sending(key, new Promise((resolve) => this.ours.set(itemIndex, resolve)));
	}

	/**
	 * Emails whose `sending|` mark was there: in flight in this process (waited for), on another
	 * worker (asked again while `canWait`) or an earlier outcome unknown. Answers those to ask again.
	 */
	private async waitForOthers(
		inFlight: number[],
		answers: Map<number, Answer>,
		canWait: boolean,
	): Promise<number[]> {
		const elsewhere: number[] = [];
		await Promise.all(
			inFlight.map(async (itemIndex) => {
				const key = this.keys.get(itemIndex) as string;
				const here = this.store.inFlight(key);
				const result = here && ((await this.untilStopped(here)) as Answer);
				if (!here || notQueued(result)) elsewhere.push(itemIndex);
				else if (result instanceof Failure) answers.set(itemIndex, UNKNOWN_EARLIER_OUTCOME);
				else answers.set(itemIndex, skipped('another execution sent it just now'));
			}),
		);
		// Asked once per email: asking writes `unknown|` until it is taken back.
		const asked = elsewhere.filter((itemIndex) => !this.waited.has(itemIndex));
		for (const itemIndex of asked) this.waited.add(itemIndex);
		const given = canWait ? await this.givenUp(asked) : new Set(elsewhere);
		const again = elsewhere.filter((itemIndex) => !given.has(itemIndex));
		for (const itemIndex of given) {
			if (this.sendUnknown) this.claimed(itemIndex, this.keys.get(itemIndex) as string);
			else answers.set(itemIndex, UNKNOWN_EARLIER_OUTCOME);
		}
		return again;
	}

	/** What the email in flight here comes to, or undefined (never sent) once the run is stopped. */
	private async untilStopped(answer: Promise<unknown>): Promise<unknown> {
		return this.stop ? await unlessAborted(answer, this.stop, () => undefined) : await answer;
	}

	/** Those of the emails whose run gave up on their answer (none when the store fails). */
	private async givenUp(itemIndexes: number[]): Promise<Set<number>> {
		if (itemIndexes.length === 0) return new Set();
		const entries = itemIndexes.map((itemIndex) => UNKNOWN + this.keys.get(itemIndex));
		const known = await this.store.record(entries).catch(() => new Set<string>());
		// Asking wrote the others: taken back with the next write.
		this.store.remove(
			undefined,
			entries.filter((entry) => !known.has(entry)),
		);
		return new Set(itemIndexes.filter((_, index) => known.has(entries[index])));
	}
}

function skipped(why: string): ApiResult {
	return { skipped: true, reason: `Not sent: ${why} (Skip Emails Already Sent)` };
}

/** How to send an email that reads "outcome unknown", once BasicsEngage shows it never arrived. */
const RELEASE_UNKNOWN =
	'Check the BasicsEngage dashboard; to send it anyway, run once with Retry Send On Server Error on.';

/** An email whose earlier request got no answer that says whether it was queued. */
const UNKNOWN_EARLIER_OUTCOME = new Failure({
	kind: 'outcome_unknown',
	description: `Nobody knows whether BasicsEngage queued it (its answer was lost or timed out, or the run was cut off), so it is not sent again. ${RELEASE_UNKNOWN}`,
});

/** Said of a failed email whose "never queued" n8n's store would not take. */
const UNRECORDED = `Skip Emails Already Sent could not record that it was not sent (n8n’s deduplication store failed), so later runs fail it as "outcome unknown". ${RELEASE_UNKNOWN}`;

function storeUnavailable(error: Error): Failure {
	const why =
		error instanceof ClaimWrittenOver
			? 'Other workers kept writing over its claim in n8n’s deduplication store'
			: `n8n said: ${error.message}`;
	return new Failure({
		kind: 'store_unavailable',
		description: `${why}. Nothing was sent or recorded for this email, so a later run sends it.`,
	});
}
