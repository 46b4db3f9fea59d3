import { NodeConnectionTypes, type INodeType, type INodeTypeDescription } from 'n8n-workflow';

import { emailCustomOperations, emailOperations } from './resources/email';
import { listCustomOperations, listOperations } from './resources/list';

export class BasicsEngage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'BasicsEngage',
		name: 'basicsEngage',
		icon: { light: 'file:basicsEngage.svg', dark: 'file:basicsEngage.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle:
			'={{ { send: "Send Email", addProfiles: "Add Profiles to List" }[$parameter["operation"]] }}',
		description: 'Send transactional emails and add contacts to lists with BasicsEngage',
		defaults: { name: 'BasicsEngage' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'basicsEngageApi', required: true }],
		// Declarative form: n8n shows its "Request Options" for such nodes, and each operation
		// below honours them. The operations run as customOperations (see their files for why).
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
					{ name: 'Email', value: 'email' },
					{ name: 'List', value: 'list' },
				],
				default: 'email',
			},
			...emailOperations,
			...listOperations,
		],
	};

	customOperations = {
		email: emailCustomOperations,
		list: listCustomOperations,
	};
}
