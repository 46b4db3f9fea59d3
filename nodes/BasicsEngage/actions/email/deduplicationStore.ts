import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';
import { randomString, sleep } from 'n8n-workflow';

/**
 * n8n's deduplication store (checkProcessedAndRecord, removeProcessed) rewrites the node's whole
 * row at each call, with no lock, so two calls at once lose one's writes. Within this n8n
 * process the executions take turns per row. Across processes (queue-mode workers) a claim is
 * timed, as in Fischer's mutual exclusion: it carries a token of its own, and once a settle delay
 * longer than any store call has passed, it is asked again; only a write no other wrote over
 * still holds its token, so of two workers claiming one email at once only the last proceeds.
 */
interface Row {
	turn: Promise<unknown>;
	/** Emails of this process in flight, by key: what their request comes to. */
	sending: Map<string, Promise<unknown>>;
	/** The store calls' latest durations, which the settle delay outlasts. */
	callMs: number[];
}

const rows = new Map<string, Row>();

/** Removals gathered into one call; claims retried when another worker wrote over them. */
const WRITE_BATCH = 100;
const CLAIM_TRIES = 5;

/**
 * The settle delay: SETTLE_FACTOR times the slowest of this process's last CALLS_KEPT calls, at
 * least MIN_SETTLE_MS. Another worker's call slower than that is the one case a claim can miss.
 */
const MIN_SETTLE_MS = 50;
const SETTLE_FACTOR = 4;
const CALLS_KEPT = 20;

/** The store for one run's emails (see skipAlreadySent). */
export class DeduplicationStore {
	private readonly row: Row;

	/** Removals not written yet, each with its item (none: an entry no item answers for). */
	private removals: Array<{ itemIndex?: number; entries: string[] }> = [];
	/** Whether a write of the removals is due within a second. */
	private timed = false;

	/** The write that takes the removals gathered so far, until it starts; the last one queued. */
	private queued: Promise<void> | undefined;
	private written: Promise<void> = Promise.resolve();
	/** Writes made beside the removals: marks, and each removal's second pass. */
	private readonly writtenAgain: Array<Promise<unknown>> = [];

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: DeduplicationScope,
		private readonly maxEntries: number,
	) {
		const key = `${context.getWorkflow().id}|${scope === 'node' ? context.getNode().id : ''}`;
		this.row = rows.get(key) ?? { turn: Promise.resolve(), sending: new Map(), callMs: [] };
		rows.set(key, this.row);
	}

	/**
	 * Records the entries once no other worker writes over them; answers those that were there
	 * before. Throws when the store fails, or when other workers wrote over it CLAIM_TRIES times.
	 */
	async claim(entries: string[]): Promise<Set<string>> {
		for (let tries = 1; ; tries++) {
			const token = `claim|${randomString(16)}`;
			const known = await this.record([...entries, token]);
			await sleep(this.settleDelay());
			const held = await this.record([token]).then(
				(stillThere) => stillThere.has(token),
				(error: Error) => {
					// Unsure it holds them: what it recorded is taken back, as never sent.
					this.remove(undefined, [token, ...entries.filter((entry) => !known.has(entry))]);
					throw error;
				},
			);
			// Asked again, a token written over is there now: it goes either way, with the next write.
			this.removals.push({ entries: [token] });
			if (held) return known;
			if (tries === CLAIM_TRIES) throw new Error('other workers kept writing over its claim');
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

	/**
	 * Removes the entries with the next write: once a batch has gathered, or a second after the
	 * first of them, so a crash forgets little and the row is not rewritten for every email.
	 */
	remove(itemIndex: number | undefined, entries: string[]): void {
		this.removals.push({ itemIndex, entries });
		if (this.removals.length >= WRITE_BATCH) void this.write();
		else if (!this.timed) {
			this.timed = true;
			// An AbortSignal's timer keeps no process alive.
			AbortSignal.timeout(1000).addEventListener('abort', () => {
				this.timed = false;
				void this.write();
			});
		}
	}

	/** Writes the removals, three tries; answers the items whose removals are still unwritten. */
	async flush(): Promise<number[]> {
		await this.written;
		for (let tries = 0; tries < 3 && this.removals.length > 0; tries++) await this.write();
		await Promise.all(this.writtenAgain);
		return this.removals.flatMap(({ itemIndex }) => (itemIndex === undefined ? [] : [itemIndex]));
	}

	/** Records the entries; answers those that were there before. */
	async record(entries: string[]): Promise<Set<string>> {
		const call = async () =>
			await this.context.helpers.checkProcessedAndRecord(entries, this.scope, {
				mode: 'entries',
				maxEntries: this.maxEntries + entries.length,
			});
		// A failed call wrote nothing: once more (two workers creating the row at once, one fails).
		const { processed } = await this.inTurn(async () => await call().catch(call));
		return new Set(processed.map(String));
	}

	/**
	 * Each removal is written twice, a settle delay apart: a call of another worker that read the
	 * row before the first wrote it back after, putting the entries back.
	 */
	private write(): Promise<void> {
		this.queued ??= this.written = this.inTurn(async () => {
			this.queued = undefined;
			const removals = this.removals.splice(0);
			if (removals.length === 0) return;
			const entries = removals.flatMap((removal) => removal.entries);
			const removeEntries = async () =>
				await this.context.helpers.removeProcessed(entries, this.scope, { mode: 'entries' });
			try {
				await removeEntries();
			} catch {
				// The next write tries again; until one succeeds, these emails read "unknown".
				this.removals.unshift(...removals);
				return;
			}
			const again = sleep(this.settleDelay()).then(() => this.inTurn(removeEntries));
			this.writtenAgain.push(again.catch(() => undefined));
		});
		return this.queued;
	}

	private settleDelay(): number {
		return Math.max(MIN_SETTLE_MS, SETTLE_FACTOR * Math.max(...this.row.callMs));
	}

	/** Runs the call when this process's earlier calls on the row are done; times it. */
	private inTurn<T>(call: () => Promise<T>): Promise<T> {
		const timed = async () => {
			const started = Date.now();
			try {
				return await call();
			} finally {
				const { callMs } = this.row;
				callMs.push(Date.now() - started);
				if (callMs.length > CALLS_KEPT) callMs.shift();
			}
		};
		const done = this.row.turn.then(timed, timed);
		this.row.turn = done.catch(() => undefined);
		return done;
	}
}
