import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { webhook, webhooks } from './actions/email/responsePage';
import { OPERATIONS, properties, unsupported } from './actions/operations';
import { requestOptionsProperty } from './helpers/options';
import { runOperation } from './transport';

export class BasicsEngage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'BasicsEngage',
		name: 'basicsEngage',
		icon: { light: 'file:basicsEngage.svg', dark: 'file:basicsEngage.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		description:
			'Send transactional emails, manage contact lists and send campaigns with BasicsEngage',
		defaults: { name: 'BasicsEngage' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'basicsEngageApi', required: true }],
		// Send and Wait for Response's links; n8n also makes it an AI agent's review tool for that.
		webhooks,
		properties: [...properties, requestOptionsProperty],
	};

	/**
	 * Programmatic, not n8n's declarative routing: n8n calls `execute` also when the node runs as
	 * an AI tool (AI Agent, MCP Server Trigger, a queue-mode worker's tool call), where routing is
	 * never used, and routing could not batch across items, pair every output or send nothing
	 * twice. Each operation declares its requests instead (actions/operations.ts).
	 */
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const resource = this.getNodeParameter('resource', 0) as string;
		const operation = this.getNodeParameter('operation', 0) as string;
		const declared = OPERATIONS.find(
			(entry) => entry.resource === resource && entry.value === operation,
		);
		const requests = declared?.module.requests ?? unsupported(resource, operation);
		return await runOperation(this, requests, this.continueOnFail());
	}

	/** An answer to Send and Wait for Response: n8n calls this, never `execute`, to resume. */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await webhook.call(this);
	}
}
