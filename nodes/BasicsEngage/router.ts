import type { IExecuteFunctions, INodeExecutionData, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import * as campaign from './resources/campaign';
import * as email from './resources/email';
import * as list from './resources/list';
import { FailureError, invalidInput } from './shared/errors';
import { RunMemory } from './shared/once';
import type { OperationOutput } from './shared/output';
import { applyOnError, ItemFailure } from './shared/output';
import type { OperationRun } from './shared/perItem';
import { getRequestSettings } from './shared/settings';

type Operation = (this: IExecuteFunctions, run: OperationRun) => Promise<OperationOutput>;

const operations: Record<string, Record<string, Operation>> = {
	email: { send: email.send.execute },
	list: { addProfiles: list.addProfiles.execute, create: list.create.execute },
	campaign: { create: campaign.create.execute, send: campaign.send.execute },
};

/**
 * The node's one entry point. n8n calls `execute` for a normal run and also when the node runs
 * as an AI tool (AI Agent, MCP Server Trigger, a queue-mode worker's tool call), where a
 * declarative node's `customOperations` are never used: every path runs the same operation.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const execute = operations[resource]?.[operation];
	try {
		if (!execute) {
			// A workflow saved by a newer version of this node, say: fail the items, send nothing.
			throw invalidInput(
				`The operation "${operation}" of resource "${resource}" is not supported`,
				'Pick the resource and operation again in the node, or update the BasicsEngage package.',
			);
		}
		const memory = RunMemory.open(this);
		const output = await execute.call(this, { memory, settings: await getRequestSettings(this) });
		if (!output.some((entry) => entry instanceof ItemFailure)) memory.forget();
		return [applyOnError(this, output)];
	} catch (error) {
		// A setting or a once-per-run parameter that cannot work, found before any request: under
		// On Error = Continue every item fails with it (n8n would otherwise pass the unsent items
		// on as if sent).
		if (error instanceof FailureError) {
			const { failure } = error;
			const failures = this.getInputData().map((_, item) => new ItemFailure(failure, item));
			return [applyOnError(this, failures)];
		}
		// Both constructors hand back an error that already is theirs unchanged.
		if (error instanceof NodeApiError) {
			throw new NodeApiError(this.getNode(), error as unknown as JsonObject);
		}
		throw new NodeOperationError(this.getNode(), error as Error);
	}
}
