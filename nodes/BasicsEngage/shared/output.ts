import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { markForErrorOutput } from './compat';
import type { ApiFailure } from './errors';
import { toNodeError } from './errors';

/** An input item that failed. The router turns it into the item's output or the run's error. */
export class ItemFailure {
	constructor(
		readonly failure: ApiFailure,
		readonly itemIndex: number,
	) {}
}

/** What an operation answers: output items, and the failures of the inputs that failed. */
export type OperationOutput = Array<INodeExecutionData | ItemFailure>;

/**
 * The one place that applies the node's "On Error" setting: under Stop Workflow the run ends
 * with the first failure, named by its item; under Continue each failure becomes an error item
 * for its input, `{ error, details }`, paired.
 */
export function applyOnError(
	context: IExecuteFunctions,
	output: OperationOutput,
): INodeExecutionData[] {
	const continueOnFail = context.continueOnFail();
	return output.map((entry) => {
		if (!(entry instanceof ItemFailure)) return entry;
		const { failure, itemIndex } = entry;
		if (!continueOnFail) throw toNodeError(context, failure, itemIndex);
		const item: INodeExecutionData = {
			json: {
				error: failure.message,
				details: {
					kind: failure.kind,
					httpCode: failure.httpCode === null ? null : Number(failure.httpCode),
					description: failure.description,
				},
			},
			pairedItem: { item: itemIndex },
		};
		if (context.getNode().onError === 'continueErrorOutput') {
			markForErrorOutput(item, toNodeError(context, failure, itemIndex));
		}
		return item;
	});
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
