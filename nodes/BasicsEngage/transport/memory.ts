import type { IContextObject, IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { Failure, tookUnclear } from '../helpers/failure';
import type { FailureFields } from '../helpers/failure';
import type { ApiResult } from './classify';

type Records = Record<string, { json: IDataObject } | { failure: FailureFields; attempts: number }>;

/**
 * What the node already did in this execution, so that n8n never makes it do it twice.
 *
 * n8n's node setting Retry On Fail runs the node again, with the same input and the same run
 * index, after it throws, and also when its first output item carries `json.error`
 * (`checkFailure` in n8n-core's workflow-execute), in every On Error mode. The per-execution
 * node context (`getContext('node')`) survives those tries on n8n 1.x and 2.x alike, so the
 * node keeps there what each request did, keyed by run index and items (a Loop Over Items round
 * is a new run index, where item indexes start again). When the node runs as an AI tool, n8n
 * calls `execute` again with a new run index per try: there the key is the request body.
 *
 * A successful run forgets its records, so execution data does not grow with them: only its own,
 * since an AI agent's tool calls run at once and share the context.
 */
export type RunMemory = ReturnType<typeof openRunMemory>;

export function openRunMemory(context: IExecuteFunctions) {
	const store = context.getContext('node') as IContextObject & { basicsEngageDone?: Records };
	const records = (store.basicsEngageDone ??= {});
	// The node's AI tool variant is the same class under the type name n8n derives for it.
	const asTool = context.getNode().type.endsWith('Tool');
	const runIndex = asTool ? 'tool' : String(context.getWorkflowDataProxy(0).$runIndex ?? 0);
	/** The keys this run recalled or remembered: what it may forget. */
	const owned = new Set<string>();
	const keyOf = (itemIndexes: number[], body: IDataObject) => {
		const key = `${runIndex}:${asTool ? JSON.stringify(body) : itemIndexes.join(',')}`;
		owned.add(key);
		return key;
	};
	return {
		/**
		 * An earlier try's answer to this request, when it is not to be sent again: `recall`'s,
		 * unless the request is repeatable, and then only once more.
		 */
		answer(itemIndexes: number[], body: IDataObject, repeatable: boolean): ApiResult | undefined {
			const record = records[keyOf(itemIndexes, body)];
			if (record && 'attempts' in record && repeatable && record.attempts < 2) return undefined;
			return this.recall(itemIndexes, body);
		},

		/** What an earlier try did with this request: its success, or its failure that may have taken effect. */
		recall(itemIndexes: number[], body: IDataObject): ApiResult | undefined {
			const record = records[keyOf(itemIndexes, body)];
			if (!record || 'json' in record) return record?.json;
			return new Failure({
				...record.failure,
				description: `Not sent again: an earlier try of this execution sent it and got no clear answer. ${record.failure.description}`,
			});
		},

		/** An earlier try's failure after which the request may have been taken (tookUnclear). */
		unclear(itemIndexes: number[], body: IDataObject): Failure | undefined {
			const record = records[keyOf(itemIndexes, body)];
			const failure = record && 'failure' in record ? new Failure(record.failure) : undefined;
			return tookUnclear(failure) ? failure : undefined;
		},

		/** Keeps a success, or a failure that may have taken effect; other failures can be repeated. */
		remember(itemIndexes: number[], body: IDataObject, result: ApiResult): void {
			const key = keyOf(itemIndexes, body);
			if (!(result instanceof Failure)) records[key] = { json: result };
			else if (result.mayHaveTakenEffect) {
				const earlier = records[key];
				const attempts = (earlier && 'attempts' in earlier ? earlier.attempts : 0) + 1;
				records[key] = { failure: result.toJSON(), attempts };
			}
		},

		/** Called when the run ends without a failure: nothing will try its requests again. */
		forget(): void {
			for (const key of owned) delete records[key];
		},
	};
}
