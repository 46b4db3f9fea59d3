import type { INodeProperties } from 'n8n-workflow';

import { addProfilesProperties } from './addProfiles';

export const listOperations: INodeProperties[] = [
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
		],
		default: 'addProfiles',
	},
	...addProfilesProperties,
];
