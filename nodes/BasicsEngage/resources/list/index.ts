import type { INodeProperties } from 'n8n-workflow';

import * as addProfiles from './addProfiles.operation';
import * as create from './create.operation';

export { addProfiles, create };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['list'] } },
		options: [
			{
				name: 'Add Profiles to List',
				value: 'addProfiles',
				action: 'Add profiles to a list',
				description: 'Add the input items as profiles to a list, in batches',
			},
			{
				name: 'Create List',
				value: 'create',
				action: 'Create a list',
				description: 'Create one list per input item, empty or with existing profiles by ID',
			},
		],
		default: 'addProfiles',
	},
	...addProfiles.description,
	...create.description,
];
