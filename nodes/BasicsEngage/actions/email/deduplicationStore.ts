import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';
import { randomString } from 'n8n-workflow';

import { waitUnlessStopped } from '../../helpers/wait';

/**
 * n8n's deduplication store (checkProcessedAndRecord, removeProcessed) rewrites the node's whole
 * row at each call, with no lock, so two calls at once lose one's writes. Within this n8n
 * process the executions take turns per row. Across processes (queue-mode workers) every write
 * is checked, as in Fischer's mutual exclusion: a claim records a token per email with its
 * entries and, once a settle delay longer than any store call has passed, asks for one again.
 * Only a write no other wrote over still holds it, so of two workers claiming one email at once
 * only the last proceeds. The claim keeps the process's turn until it has asked: a call of its
 * own between could write back the token it read after the other worker's claim erased it. The
 * process's claims waiting meanwhile are made together, in the next turn. The token stays until
 * the email is settled and goes with its entries: asked for again a settle delay later, a token
 * that is back shows a call that read the row before the removal put them back, and the removal
 * is written again.
 */
interface Row {
	turn: Promise<unknown>;
	/** Emails of this process in flight, by key: what their request comes to. */
	sending: Map<string, Promise<unknown>>;
	/** The store calls' latest durations, which the settle delay outlasts. */
	callMs: number[];
	/** Tokens no claim needs any more, removed with this process's next write. */
	garbage: string[];
	/** Claims waiting for the row's next turn, made in one write. */
	waiting: Waiting[];
}

interface Waiting {
	entries: string[];
	maxEntries: number;
	done: (claimed: Claimed | Error) => void;
}

/** A claim's entries that were there before; whether its write held (an Error: unknown). */
interface Claimed {
	known: Set<string>;
	held: boolean | Error;
}

const rows = new Map<string, Row>();

/** Entries to remove; with the claim's token, checked, and written again when put back. */
interface Removal {
	itemIndex?: number;
	entries: string[];
	token?: string;
	tries?: number;
}

/** Removals gathered into one call; claims and removals made again when written over. */
const WRITE_BATCH = 100;
const TRIES = 5;

/** Other workers wrote over a claim TRIES times: the store works, but is too busy to hold it. */
export class ClaimWrittenOver extends Error {}

/**
 * The settle delay: SETTLE_FACTOR times the slowest of this process's last CALLS_KEPT calls, at
 * least MIN_SETTLE_MS. Another worker's call slower than that is the one case a claim can miss
 * (with fewer than four workers); under load the last 20 calls left too many such calls
 * (docs/running-at-scale.md).
 */
const MIN_SETTLE_MS = 50;
const SETTLE_FACTOR = 2;
const CALLS_KEPT = 100;

/** The store for one run's emails (see skipAlreadySent). */
export class DeduplicationStore {
	private readonly row: Row;

	/** Removals not written yet, each with its item (none: an entry no item answers for). */
	private removals: Removal[] = [];
	/** Whether a write of the removals is due within a second; whether the run wrote its last. */
	private writeDue = false;
	private flushed = false;

	/** The write that takes the removals gathered so far, until it starts; the last one queued. */
	private queued: Promise<void> | undefined;
	private written: Promise<void> = Promise.resolve();
	/** Writes made beside the removals: marks, and each removal's check. */
	private readonly writtenAgain: Array<Promise<unknown>> = [];
	/** Whether the run logged a store call slower than the settle delay (once is enough). */
	private warnedSlow = false;

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: DeduplicationScope,
		private readonly maxEntries: number,
	) {
		const key = `${context.getWorkflow().id}|${scope === 'node' ? context.getNode().id : ''}`;
		this.row = rows.get(key) ?? {
			turn: Promise.resolve(),
			sending: new Map(),
			callMs: [],
			garbage: [],
			waiting: [],
		};
		rows.set(key, this.row);
	}

	/**
	 * Records `entries` (those of `count` emails) once no other worker writes over them; answers
	 * those that were there before, and each email's token. Throws when the store fails, or when
	 * other workers wrote over the claim TRIES times.
	 */
	async claim(entries: string[], count: number): Promise<{ known: Set<string>; tokens: string[] }> {
		for (let tries = 1; ; tries++) {
			const tokens = Array.from({ length: count }, () => `claim|${randomString(16)}`);
			const { known, held } = await this.together([...entries, ...tokens]);
			if (held instanceof Error) {
				// Unsure it holds them: what it recorded is taken back, as never sent.
				this.remove(undefined, [...tokens, ...entries.filter((entry) => !known.has(entry))]);
				throw held;
			}
			if (held) return { known, tokens };
			if (tries === TRIES) throw new ClaimWrittenOver();
			// Workers that wrote over each other try again at different times.
			await waitUnlessStopped(Math.random() * this.settleDelay() * tries, undefined);
		}
	}

	/** What an email of this process in flight comes to, if one with this key is. */
	inFlight(key: string): Promise<unknown> | undefined {
		return this.row.sending.get(key);
	}

	/** Marks the email in flight in this process until `answer` settles. */
	sending(key: string, answer: Promise<unknown>): void {
		this.row.sending.set(key, answer);
		const done = () => {
			if (this.row.sending.get(key) === answer) this.row.sending.delete(key);
		};
		void answer.then(done, done);
	}

	/** Records the entries now; a failure leaves them unwritten (a reader then waits longer). */
	mark(entries: string[]): void {
		this.writtenAgain.push(this.record(entries).catch(() => undefined));
	}

	/** Tokens left in the row: removed with the next write, none of their own (fewer calls). */
	discard(tokens: string[]): void {
		this.row.garbage.push(...tokens);
	}

	/**
	 * Removes the entries (and the claim's token, checked) with the next write: once a batch has
	 * gathered, or a second after the first of them, so a crash forgets little and the row is not
	 * rewritten for every email.
	 */
	remove(itemIndex: number | undefined, entries: string[], token?: string): void {
		this.removals.push({ itemIndex, entries, token });
		if (this.removals.length >= WRITE_BATCH) void this.write();
		else if (!this.writeDue) {
			this.writeDue = true;
			// An AbortSignal's timer keeps no process alive.
			AbortSignal.timeout(1000).addEventListener('abort', () => {
				this.writeDue = false;
				// Not once the run is over: what it said of its items stays true.
				if (!this.flushed) void this.write();
			});
		}
	}

	/** Writes the removals, three tries; answers the items whose removals are still unwritten. */
	async flush(): Promise<number[]> {
		await this.written;
		for (let tries = 0; tries < 3 && this.removals.length > 0; tries++) await this.write();
		for (let next; (next = this.writtenAgain.shift()); ) await next;
		this.flushed = true;
		return this.removals.flatMap(({ itemIndex }) => (itemIndex === undefined ? [] : [itemIndex]));
	}

	/** Records the entries; answers those that were there before. */
	async record(entries: string[]): Promise<Set<string>> {
		return await this.inTurn(async () => await this.recordNow(entries, this.maxEntries));
	}

	/** Joins the row's next claim; rejects when its first call fails (it recorded nothing). */
	private together(entries: string[]): Promise<Claimed> {
		const { waiting } = this.row;
		const claimed = new Promise<Claimed>((resolve, reject) => {
			const done = (result: Claimed | Error) =>
				result instanceof Error ? reject(result) : resolve(result);
			waiting.push({ entries, maxEntries: this.maxEntries, done });
		});
		if (waiting.length === 1) void this.inTurn(async () => await this.claimWaiting());
		return claimed;
	}

	/** Records the waiting claims in one write and, a settle delay later, asks for one's token. */
	private async claimWaiting(): Promise<void> {
		const claims = this.row.waiting.splice(0);
		const entries = [...new Set(claims.flatMap((claim) => claim.entries))];
		const maxEntries = Math.max(...claims.map((claim) => claim.maxEntries));
		const there = await this.recordNow(entries, maxEntries).catch((error: Error) => error);
		if (there instanceof Error) {
			for (const claim of claims) claim.done(there);
			return;
		}
		// One write: one token tells for all (the last entry is a token).
		const token = entries[entries.length - 1];
		await this.settle();
		const held = await this.recordNow([token], maxEntries).then(
			(stillThere) => stillThere.has(token),
			(error: Error) => error,
		);
		// Asked again, the token is there now: no claim holds it.
		if (held === false) this.discard([token]);
		// An entry an earlier claim of this write made is there for the later ones.
		const made = new Set<string>();
		for (const claim of claims) {
			const known = new Set(claim.entries.filter((entry) => there.has(entry) || made.has(entry)));
			claim.entries.forEach((entry) => made.add(entry));
			claim.done({ known, held });
		}
	}

	/** Records the entries now; answers those that were there before. */
	private async recordNow(entries: string[], maxEntries: number): Promise<Set<string>> {
		const call = async () =>
			await this.timed(
				async () =>
					await this.context.helpers.checkProcessedAndRecord(entries, this.scope, {
						mode: 'entries',
						maxEntries: maxEntries + entries.length,
					}),
			);
		// A failed call wrote nothing: once more (two workers creating the row at once, one fails).
		const { processed } = await call().catch(call);
		return new Set(processed.map(String));
	}

	private write(): Promise<void> {
		this.queued ??= this.written = this.inTurn(async () => {
			this.queued = undefined;
			const removals = this.removals.splice(0);
			if (removals.length === 0) return;
			const garbage = this.row.garbage.splice(0);
			const entries = removals.flatMap(({ entries, token }) =>
				token ? [...entries, token] : entries,
			);
			try {
				await this.timed(
					async () =>
						await this.context.helpers.removeProcessed([...entries, ...garbage], this.scope, {
							mode: 'entries',
						}),
				);
			} catch {
				// The next write tries again; until one succeeds, these emails read "unknown".
				this.removals.unshift(...removals);
				this.discard(garbage);
				return;
			}
			const checked = removals.filter(({ token }) => token);
			if (checked.length > 0) this.writtenAgain.push(this.check(checked));
		});
		return this.queued;
	}

	/** Asks for the removed tokens a settle delay later: one that is back, its removal again. */
	private async check(removals: Removal[]): Promise<void> {
		await this.settle();
		const back = await this.record(removals.map(({ token }) => token as string)).catch(() => null);
		if (!back) return;
		for (const removal of removals) {
			const { token, tries = 1 } = removal;
			if (!back.has(token as string)) this.discard([token as string]);
			else if (tries < TRIES) this.removals.push({ ...removal, tries: tries + 1 });
		}
		if (this.removals.length > 0) await this.write();
	}

	/** Waits a settle delay; its timer, an AbortSignal's, keeps no process alive. */
	private settle(): Promise<void> {
		return waitUnlessStopped(this.settleDelay(), undefined);
	}

	private settleDelay(): number {
		return Math.max(MIN_SETTLE_MS, SETTLE_FACTOR * Math.max(...this.row.callMs));
	}

	/** Runs the work when this process's earlier work on the row is done. */
	private inTurn<T>(work: () => Promise<T>): Promise<T> {
		const done = this.row.turn.then(work, work);
		this.row.turn = done.catch(() => undefined);
		return done;
	}

	/** Makes a store call, timing it for the settle delay. */
	private async timed<T>(call: () => Promise<T>): Promise<T> {
		const [started, settleMs] = [Date.now(), this.settleDelay()];
		try {
			return await call();
		} finally {
			const { callMs } = this.row;
			const ms = Date.now() - started;
			callMs.push(ms);
			if (callMs.length > CALLS_KEPT) callMs.shift();
			if (ms > settleMs) this.warnSlow(ms, settleMs);
		}
	}

	/** The one case a claim can miss, for whoever runs n8n to see: a busy database. */
	private warnSlow(ms: number, settleMs: number): void {
		if (this.warnedSlow) return;
		this.warnedSlow = true;
		this.context.logger.warn(
			`BasicsEngage, Skip Emails Already Sent: a call to n8n's deduplication store took ${ms} ms, longer than the settle delay (${settleMs} ms). Had another worker claimed the same email meanwhile, both may have sent it.`,
		);
	}
}
