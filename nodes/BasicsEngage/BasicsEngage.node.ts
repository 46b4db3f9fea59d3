import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import * as campaign from './resources/campaign';
import * as email from './resources/email';
import * as list from './resources/list';
import { router } from './router';
import { requestOptionsProperty } from './shared/requestOptions';

export class BasicsEngage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'BasicsEngage',
		name: 'basicsEngage',
		icon: { light: 'file:basicsEngage.svg', dark: 'file:basicsEngage.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle:
			'={{ { "email:send": "Send Email", "list:addProfiles": "Add Profiles to List", "list:create": "Create List", "campaign:create": "Create Campaign", "campaign:send": "Send Campaign" }[$parameter["resource"] + ":" + $parameter["operation"]] }}',
		description:
			'Send transactional emails, manage contact lists and send campaigns with BasicsEngage',
		defaults: { name: 'BasicsEngage' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'basicsEngageApi', required: true }],
		// Declarative form, kept for the base URL and headers it documents; the requests are built
		// by the operations (see router.ts for why the node has `execute`).
		requestDefaults: {
			baseURL: '={{ $credentials.baseUrl.trim().replace(/\\/+$/, "") }}',
			headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
		},
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Campaign', value: 'campaign' },
					{ name: 'Email', value: 'email' },
					{ name: 'List', value: 'list' },
				],
				default: 'email',
			},
			...email.description,
			...list.description,
			...campaign.description,
			requestOptionsProperty,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
