import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { SuccessContract } from '../../shared/answers';
import type { ApiFailure } from '../../shared/errors';
import { optionsCollection } from '../../shared/properties';
import type { OperationRun } from '../../shared/run';
import type { OperationOutput } from '../../shared/output';
import { notSentFailure } from '../../shared/output';
import { runPerItem } from '../../shared/perItem';
import { readRetryPolicy, retryOptionsUntilSent } from '../../shared/retry';
import { keepServerValue, MAX_ERROR_TEXT } from '../../shared/serverText';
import { readOptions } from '../../shared/settings';
import { readIdList, readText, readTrimmed } from '../../shared/validation';

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
		hint: 'BasicsEngage answers no profile IDs: to fill the list with contacts, leave this empty and use Add Profiles to List with the new list ID',
	},
	optionsCollection(
		retryOptionsUntilSent(
			'the list may exist already, and sending again would create a second one',
		),
	),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['list'], operation: ['create'] } },
	properties,
);

/**
 * One list per input item, paired to it. The requests go one at a time: a run creates few lists,
 * the lists are created in input order, and a 401 or 429 stops the run after one request.
 */
export async function execute(
	this: IExecuteFunctions,
	{ memory, settings }: OperationRun,
): Promise<OperationOutput> {
	const options = readOptions(this, 'options');
	return await runPerItem(this, memory, settings, {
		read: (itemIndex) => ({
			path: '/list/create',
			body: readCreateList(this, itemIndex),
			contract: listCreated,
		}),
		concurrency: 1,
		// A second try of a request that may have arrived could create a second list.
		retryPolicy: readRetryPolicy(options, false),
		toJson: (body) => ({
			listId: keepServerValue((body.data as IDataObject).listId, settings.secrets, MAX_ERROR_TEXT),
		}),
		wording: {
			done: 'Created',
			noneDone: 'No other list of this run was created.',
			mayHaveBeenDone: 'May have been created',
			notSent,
		},
	});
}

function notSent(cause: ApiFailure | undefined): ApiFailure {
	return notSentFailure(
		cause,
		'an earlier request of this run failed',
		'This list was not created, so it can be created later',
	);
}

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
