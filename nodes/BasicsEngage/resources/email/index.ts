import type { INodeProperties } from 'n8n-workflow';

import * as send from './send.operation';

export { send };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['email'] } },
		options: [
			{
				name: 'Send Email',
				value: 'send',
				action: 'Send an email',
				description: 'Queue one transactional email per input item',
			},
		],
		default: 'send',
	},
	...send.description,
];
