import type { IExecuteFunctions, INodeExecutionData, IPairedItemData } from 'n8n-workflow';

import type { ApiFailure } from './transport';
import { toNodeError } from './transport';

/**
 * The item a failed input becomes under "On Error: Continue". Its json holds only `error` and
 * `details`, the shape n8n moves to the error output and merges with the input item's fields.
 * No `item.error`: n8n would replace the json with the bare message and lose `details`.
 */
export function errorItem(
	failure: ApiFailure,
	pairedItem: IPairedItemData | IPairedItemData[],
): INodeExecutionData {
	return {
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
	return errorItem(failure, { item: itemIndex });
}
