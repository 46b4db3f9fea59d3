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
