import type { IExecuteFunctions, INodeExecutionData, IPairedItemData } from 'n8n-workflow';

import { markForErrorOutput } from './compat';
import type { ApiFailure } from './errors';
import { toNodeError } from './errors';

/** The item a failed input becomes under "On Error: Continue": `{ error, details }`, paired. */
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
		markForErrorOutput(item, toNodeError(context, failure, itemIndex));
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
