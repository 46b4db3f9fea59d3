import type { IExecuteFunctions, INodeExecutionData, IPairedItemData } from 'n8n-workflow';

import type { ApiFailure } from './errors';
import { toNodeError } from './errors';

/**
 * The item a failed input becomes under "On Error: Continue": `{ error, details }`, paired.
 *
 * n8n 2.x moves such json to the error output by its keys alone; n8n 1.x only moves items that
 * carry `item.error`, and both later replace the json of any item still carrying `item.error`
 * with the bare message. So for the error output the item carries `error` as a non-enumerable
 * property: both engines see it when routing, and the copy they route (built with object
 * spread, merged with the input's fields) no longer has it, so `details` survives.
 */
export function errorItem(
	context: IExecuteFunctions,
	failure: ApiFailure,
	pairedItem: IPairedItemData | IPairedItemData[],
	itemIndex: number,
): INodeExecutionData {
	const item: INodeExecutionData = {
		json: {
			error: failure.message,
			details: {
				kind: failure.kind,
				httpCode: failure.httpCode === null ? null : Number(failure.httpCode),
				description: failure.description,
			},
		},
		pairedItem,
	};
	if (context.getNode().onError === 'continueErrorOutput') {
		Object.defineProperty(item, 'error', {
			value: toNodeError(context, failure, itemIndex),
			enumerable: false,
		});
	}
	return item;
}

/**
 * One place that applies the node's "On Error" setting: under Continue the failure becomes an
 * error item for the input, otherwise the run stops with an n8n error naming the item.
 */
export function failItem(
	context: IExecuteFunctions,
	failure: ApiFailure,
	itemIndex: number,
): INodeExecutionData {
	if (!context.continueOnFail()) throw toNodeError(context, failure, itemIndex);
	return errorItem(context, failure, { item: itemIndex }, itemIndex);
}

/**
 * The failure of an input that a run did not send because an earlier request stopped the run:
 * it keeps the first failure's kind, so a branch on `details.kind` treats both alike, and says
 * the input can be sent again.
 */
export function notSentFailure(
	cause: ApiFailure | undefined,
	reason: string,
	whatNow: string,
): ApiFailure {
	return {
		kind: cause?.kind ?? 'unexpected_response',
		httpCode: null,
		mayHaveTakenEffect: false,
		message: `Not sent: ${reason}`,
		description: `${whatNow}. First failure: ${cause?.message ?? 'unknown'}`,
	};
}
