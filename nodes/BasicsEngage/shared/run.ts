import type { RunMemory } from './once';
import type { RequestSettings } from './settings';

/** What the router hands every operation: read once per run, before any item. */
export interface OperationRun {
	/** What earlier tries of this run did (n8n's Retry On Fail). */
	memory: RunMemory;
	/** The credential and the Request Options. */
	settings: RequestSettings;
}
