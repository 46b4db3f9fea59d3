import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionsCollection, retryOptions } from '../../helpers/options';
import { readIdList, readText, readTrimmed } from '../../helpers/read';
import type { DeclareRequests, SuccessContract } from '../../transport';

/** The published success of /list/create: `{ status: 'success', data: { listId } }`. */
const listCreated: SuccessContract = {
	check: (data) =>
		typeof data.listId === 'string' && data.listId.trim() !== '' ? undefined : 'it has no "listId"',
	effect: 'the list may have been created',
};

const properties: INodeProperties[] = [
	{
		displayName: 'List Name',
		name: 'listName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Spring sale segment',
		description: 'Name of the new list',
		hint: 'One new list per input item',
	},
	{
		displayName: 'List Description',
		name: 'listDescription',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Customers who bought twice in the last 90 days',
		description: 'Description of the new list; BasicsEngage requires one to create a list',
	},
	{
		displayName: 'Profile IDs',
		name: 'profileIds',
		type: 'string',
		default: '',
		placeholder: 'e.g. prof_1f0c2a9be4d35e71, prof_9b3e04d1c27a6f58',
		description:
			'IDs of existing BasicsEngage profiles to put in the list, separated by commas, or a list of IDs from an expression. Leave empty for an empty list.',
		hint: 'BasicsEngage answers no profile IDs: to add contacts, leave this empty and use Add Profiles to List with the new list ID',
	},
	optionsCollection(
		retryOptions('the list may exist already, and sending again would create a second one'),
	),
];

const displayOptions = { show: { resource: ['list'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/** One list per input item, created one at a time in input order, never twice. */
export const requests: DeclareRequests = function () {
	return {
		path: '/list/create',
		body: (itemIndex) => readCreateList(this, itemIndex),
		contract: listCreated,
		toJson: (answer) => ({ listId: (answer.data as IDataObject).listId }),
		repeatable: false,
		done: 'Created',
	};
};

function readCreateList(context: IExecuteFunctions, itemIndex: number): IDataObject {
	const listName = readTrimmed(context.getNodeParameter('listName', itemIndex), 'List Name');
	const listDescription = readText(
		context.getNodeParameter('listDescription', itemIndex),
		'List Description',
	);
	const profiles = readIdList(context.getNodeParameter('profileIds', itemIndex, ''), 'Profile IDs');
	return {
		listName,
		listDescription,
		...(profiles.length > 0 ? { profiles } : {}),
	};
}
