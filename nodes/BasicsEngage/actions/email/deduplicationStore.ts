import type { DeduplicationScope, IExecuteFunctions } from 'n8n-workflow';

/**
 * n8n's deduplication store (checkProcessedAndRecord, removeProcessed) rewrites the node's whole
 * row at each call, so two calls at once (two executions of a busy workflow) lose one's writes:
 * the executions of this n8n process take turns per row. Another process (a queue-mode worker)
 * can still erase what this one wrote, so each call also writes again what this process settled
 * for its last emails (`recent`), and this process trusts its own record of them.
 */
interface Row {
	turn: Promise<unknown>;
	/** Entries claimed and not yet settled, which History Size must not count. */
	held: number;
	/** An entry settled to stay, and the entries removed with it, newest last. */
	recent: Map<string, string[]>;
}

const rows = new Map<string, Row>();

/** Emails whose settlement each call writes again; and removals gathered into one call. */
const RECENT = 100;
const WRITE_BATCH = 100;

/** The store for one run's emails, two entries each (see skipAlreadySent). */
export class DeduplicationStore {
	private readonly row: Row;

	/** Removals not written yet, each with its item (none: a skipped email's). */
	private removals: Array<{ itemIndex?: number; entries: string[] }> = [];

	/** The write that takes the removals gathered so far, until it starts; the last one queued. */
	private queued: Promise<void> | undefined;
	private written: Promise<void> = Promise.resolve();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly scope: DeduplicationScope,
		private readonly historySize: number,
	) {
		const key = `${context.getWorkflow().id}|${scope === 'node' ? context.getNode().id : ''}`;
		this.row = rows.get(key) ?? { turn: Promise.resolve(), held: 0, recent: new Map() };
		rows.set(key, this.row);
	}

	/** Records the entries; answers those that were there before. */
	async claim(entries: string[]): Promise<Set<string>> {
		const { processed } = await this.inTurn(async () => {
			const maxEntries = this.historySize + this.row.held + entries.length;
			const again = [...this.row.recent.keys()].filter((entry) => !entries.includes(entry));
			const { helpers } = this.context;
			const record = async () =>
				await helpers.checkProcessedAndRecord([...entries, ...again], this.scope, {
					mode: 'entries',
					maxEntries,
				});
			// A failed call wrote nothing: once more (two workers creating the row at once, one fails).
			const answer = await record().catch(record);
			this.row.held += entries.length;
			return answer;
		});
		return new Set(processed.map(String));
	}

	/** Whether this process settled the entry to stay, lately. */
	wrote(entry: string): boolean {
		return this.row.recent.has(entry);
	}

	/**
	 * Removes an email's entries (and knows `stays` is there for good) with the next write: once
	 * a batch has gathered, or a second after the first of them, so a crash forgets little and
	 * the row is not rewritten for every email. (An AbortSignal's timer keeps no process alive.)
	 */
	remove(itemIndex: number | undefined, entries: string[], stays?: string): void {
		if (stays) {
			const { recent } = this.row;
			recent.delete(stays);
			recent.set(stays, entries);
			for (const [old] of recent)
				if (recent.size > Math.min(RECENT, this.historySize)) recent.delete(old);
		}
		this.removals.push({ itemIndex, entries });
		if (this.removals.length >= WRITE_BATCH) void this.write();
		else if (this.removals.length === 1) {
			AbortSignal.timeout(1000).addEventListener('abort', () => void this.write());
		}
	}

	/** An email's entries stay: its outcome is unknown, or they were never this run's. */
	keep(): void {
		this.row.held -= 2;
	}

	/** Writes the removals, three tries; answers the items whose removals are still unwritten. */
	async flush(): Promise<number[]> {
		await this.written;
		for (let tries = 0; tries < 3 && this.removals.length > 0; tries++) await this.write();
		return this.removals.flatMap(({ itemIndex }) => (itemIndex === undefined ? [] : [itemIndex]));
	}

	private write(): Promise<void> {
		this.queued ??= this.written = this.inTurn(async () => {
			this.queued = undefined;
			const removals = this.removals.splice(0);
			if (removals.length === 0) return;
			const again = [...this.row.recent.values()].flat();
			const entries = [...removals.flatMap((removal) => removal.entries), ...again];
			try {
				await this.context.helpers.removeProcessed(entries, this.scope, { mode: 'entries' });
				this.row.held -= 2 * removals.length;
			} catch {
				// The next write tries again; until one succeeds, these emails read "unknown".
				this.removals.unshift(...removals);
			}
		});
		return this.queued;
	}

	private inTurn<T>(call: () => Promise<T>): Promise<T> {
		const done = this.row.turn.then(call, call);
		this.row.turn = done.catch(() => undefined);
		return done;
	}
}
