import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as send from './send.operation';

export { create, send };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['campaign'] } },
		options: [
			{
				name: 'Create Campaign',
				value: 'create',
				action: 'Create a campaign',
				description: 'Create one campaign per input item, to be sent with Send Campaign',
			},
			{
				name: 'Send Campaign',
				value: 'send',
				action: 'Send a campaign to every profile of its lists',
				description:
					"Start mailing every profile of the campaign's lists. Never sent again after a request that may have reached BasicsEngage.",
			},
		],
		default: 'create',
	},
	...create.description,
	...send.description,
];
