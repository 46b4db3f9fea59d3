import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { Failure, toNodeError } from '../helpers/failure';
import type { ApiResult } from './classify';
import { keepServerValues } from './classify';
import type { Run } from './index';
import type { Request, SendReport } from './send';

/** A request's items and what they came to: an output json, or a failure. */
export interface Outcome {
	itemIndexes: number[];
	result: ApiResult;
	/** A batch's output pairs with all its items, even when it has one. */
	batch?: boolean;
}

/**
 * The report stage: what each request came to, for its items. A request never sent fails as
 * "Not sent", with the kind of the failure that stopped the run, so a branch on `details.kind`
 * treats both alike. Under Stop Workflow the run ends at its first failed item in input order
 * (one not sent included: Add Profiles sends list by list), whose error says which requests
 * done before it (or in flight beside it) took effect, so a re-run can skip them.
 */
export function report({ operation, settings, continueOnFail }: Run, sent: SendReport): Outcome[] {
	const { requests, stoppedBy, notes } = sent;
	const batch = operation.shape.per !== 'item';
	const notSent = new Failure({
		kind: stoppedBy?.failure.kind ?? 'unexpected_response',
		message: `Not sent: ${stoppedBy?.why ?? 'the execution was stopped'}`,
		description: `This item was not sent, so it can be sent again later. First failure: ${stoppedBy?.failure.message ?? 'unknown'}`,
	});
	const planned = requests.filter((request) => !request.instead);
	const inInputOrder = [...planned].sort((a, b) => a.itemIndexes[0] - b.itemIndexes[0]);
	const failed = ({ came }: Request) => (came?.result ?? notSent) instanceof Failure;
	const stoppedAt = continueOnFail ? undefined : inInputOrder.find(failed);
	return requests.map((request): Outcome => {
		const { itemIndexes, came, instead } = request;
		const result = came?.result ?? notSent;
		if (instead) return { itemIndexes, result, batch };
		if (!(result instanceof Failure)) {
			// Answered by BasicsEngage, or instead of it by the guard (as it is).
			const json = came?.body && operation.toJson(result, came.body, itemIndexes);
			const kept = json ? keepServerValues(json, settings.secrets) : result;
			return { itemIndexes, result: kept, batch };
		}
		const said = [result.description];
		if (request === stoppedAt) said.push(...runNotes(operation.done, planned, stoppedAt));
		const description = [...said, notes.get(itemIndexes[0])].filter(Boolean).join(' ');
		return { itemIndexes, result: new Failure({ ...result.toJSON(), description }) };
	});
}

/** What the run's other requests did: those that succeeded, and those that may have. */
function runNotes(done: string, planned: Request[], stoppedAt: Request): string[] {
	// What each request came to; an item answered instead of sent (skipped) was no request.
	const itemsWhere = (test: (result: ApiResult, request: Request) => boolean) =>
		planned.flatMap((request) => {
			const { came, itemIndexes } = request;
			const result = came?.body || came?.result instanceof Failure ? came.result : undefined;
			return result !== undefined && test(result, request) ? itemIndexes : [];
		});
	const succeeded = itemsWhere((result) => !(result instanceof Failure));
	const unknown = itemsWhere(
		(result, request) =>
			request !== stoppedAt && result instanceof Failure && result.mayHaveTakenEffect,
	);
	return [
		succeeded.length > 0
			? `${done} in this run (item indexes): ${succeeded.join(', ')}.`
			: 'No other request of this run took effect.',
		unknown.length > 0 ? `May have taken effect (item indexes): ${unknown.join(', ')}.` : '',
	];
}

/**
 * Under Stop Workflow the run ends with the first failure in input order, named by its item;
 * under Continue each failure is an error item for each of its inputs, `{ error, details }`.
 */
export function applyOnError(
	context: IExecuteFunctions,
	outcomes: Outcome[],
	continueOnFail: boolean,
): INodeExecutionData[] {
	const errorOutput = context.getNode().onError === 'continueErrorOutput';
	outcomes.sort((a, b) => a.itemIndexes[0] - b.itemIndexes[0]);
	// A batch's success comes at its first item; its failures, one per item, each at its own.
	const output = outcomes.flatMap(({ itemIndexes, result, batch }) => {
		if (!(result instanceof Failure)) {
			const pairedItem = batch ? itemIndexes.map((item) => ({ item })) : { item: itemIndexes[0] };
			return [{ at: itemIndexes[0], item: { json: result, pairedItem } }];
		}
		return itemIndexes.map((itemIndex) => {
			if (!continueOnFail) throw toNodeError(context, result, itemIndex);
			const item: INodeExecutionData = {
				json: {
					error: result.message,
					details: {
						kind: result.kind,
						httpCode: result.httpCode === null ? null : Number(result.httpCode),
						description: result.description,
					},
				},
				pairedItem: { item: itemIndex },
			};
			// n8n 2.x routes an item to the error output by its json's keys alone; 1.x only moves items
			// that carry `item.error`, and both then replace the json of an item still carrying it
			// with the bare message. Non-enumerable, it is seen when routing and gone from the copy
			// they route, so `details` survives (test/harness/engine-differences.test.js).
			if (errorOutput) {
				const error = toNodeError(context, result, itemIndex);
				Object.defineProperty(item, 'error', { value: error, enumerable: false });
			}
			return { at: itemIndex, item };
		});
	});
	return output.sort((a, b) => a.at - b.at).map(({ item }) => item);
}
