import type { IContextObject, IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { ApiResult } from './answers';
import type { ApiFailure } from './errors';
import type { RetryPolicy } from './retry';
import { requestWithRetries } from './retry';
import type { RequestSettings } from './settings';
import type { ApiRequest } from './transport';

/** What one request did: its success answer, or a failure that may have taken effect. */
export type DoneRecord = { json: IDataObject } | { failure: ApiFailure; attempts: number };

type Records = Record<string, DoneRecord>;

/**
 * What the node already did in this execution, so that n8n never makes it do it twice.
 *
 * n8n's node setting Retry On Fail runs the node again, with the same input and the same run
 * index, after it throws, and also when its first output item carries `json.error`
 * (`checkFailure` in n8n-core's workflow-execute), in every On Error mode. The per-execution
 * node context (`getContext('node')`) survives those tries on n8n 1.x and 2.x alike, so the
 * node keeps there what each request did, keyed by run index and item (a Loop Over Items round
 * is a new run index, where item indexes start again). When the node runs as an AI tool, n8n
 * calls `execute` again with a new run index per try: there the key is the request body.
 *
 * A successful run forgets its records, so execution data does not grow with them.
 */
export class RunMemory {
	private constructor(
		private readonly records: Records,
		private readonly prefix: string,
		private readonly byBody: boolean,
	) {}

	static open(context: IExecuteFunctions): RunMemory {
		const store = context.getContext('node') as IContextObject & { basicsEngageDone?: Records };
		store.basicsEngageDone ??= {};
		// The node's AI tool variant is the same class under the type name n8n derives for it.
		const asTool = context.getNode().type.endsWith('Tool');
		const runIndex = asTool ? 'tool' : String(context.getWorkflowDataProxy(0).$runIndex ?? 0);
		return new RunMemory(store.basicsEngageDone, `${runIndex}:`, asTool);
	}

	private key(itemKey: string, body: IDataObject): string {
		return this.prefix + (this.byBody ? JSON.stringify(body) : itemKey);
	}

	/** What an earlier try of this run did for this request, if anything that must not repeat. */
	recall(itemKey: string, body: IDataObject): DoneRecord | undefined {
		return this.records[this.key(itemKey, body)];
	}

	remember(itemKey: string, body: IDataObject, record: DoneRecord): void {
		this.records[this.key(itemKey, body)] = record;
	}

	/** Called when the run ends without a failure: nothing will try it again. */
	forget(): void {
		for (const key of Object.keys(this.records)) {
			if (key.startsWith(this.prefix)) delete this.records[key];
		}
	}
}

/**
 * Sends a request unless an earlier try of this run already did: a success is answered again as
 * it was, and a failure that may have taken effect (a 5xx, a lost answer) is answered again too,
 * unless the policy allows such a retry, and then only once more. Refusals (400, 401, 429) and
 * requests that never left are not remembered: sending them again cannot do anything twice.
 */
export async function requestOnce(
	context: IExecuteFunctions,
	settings: RequestSettings,
	request: ApiRequest,
	policy: RetryPolicy,
	memory: RunMemory,
	itemKey: string,
): Promise<ApiResult> {
	const done = memory.recall(itemKey, request.body);
	if (done && 'json' in done) return { ok: true, body: done.json };
	if (done && (!policy.retryMaybeSent || done.attempts >= 2)) {
		return { ok: false, failure: done.failure };
	}
	const result = await requestWithRetries(context, settings, request, policy);
	if (result.ok) {
		memory.remember(itemKey, request.body, { json: result.body });
	} else if (result.failure.mayHaveTakenEffect) {
		const attempts = (done && 'attempts' in done ? done.attempts : 0) + 1;
		memory.remember(itemKey, request.body, { failure: result.failure, attempts });
	}
	return result;
}
