import type { INodeProperties } from 'n8n-workflow';

import { addProfilesProperties } from './addProfiles';
import { createListProperties } from './create';

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
			{
				name: 'Create List',
				value: 'create',
				action: 'Create a list',
				description: 'Create one list per input item, empty or with existing profiles by ID',
			},
		],
		default: 'addProfiles',
	},
	...addProfilesProperties,
	...createListProperties,
];
