import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { sendEmail } from './resources/email/send';
import { addProfiles } from './resources/list/addProfiles';
import { failItem } from './shared/output';
import { invalidInput } from './shared/transport';

type Operation = (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;

const operations: Record<string, Record<string, Operation>> = {
	email: { send: sendEmail },
	list: { addProfiles },
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
	if (execute) return await execute.call(this);

	// A workflow saved by a newer version of this node, say: fail the items, send nothing.
	const failure = invalidInput(
		`The operation "${operation}" of resource "${resource}" is not supported`,
		'Pick the resource and operation again in the node, or update the BasicsEngage package.',
	);
	return [this.getInputData().map((_, itemIndex) => failItem(this, failure, itemIndex))];
}
