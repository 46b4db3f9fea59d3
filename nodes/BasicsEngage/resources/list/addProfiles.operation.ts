import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { SuccessContract } from '../../shared/answers';
import type { OperationOutput } from '../../shared/output';
import { optionsCollection } from '../../shared/properties';
import type { OperationRun } from '../../shared/perItem';
import { runRequests } from '../../shared/perItem';
import { readRetryPolicy, retryOptions } from '../../shared/retry';
import { readNumberOption, readOptions } from '../../shared/settings';
import {
	readEmailAddress,
	readForRun,
	readItems,
	readOptionalText,
	readTrimmed,
} from '../../shared/validation';

const batchSizeOption: INodeProperties = {
	displayName: 'Batch Size',
	name: 'batchSize',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1000, numberPrecision: 0 },
	default: 100,
	description: 'How many profiles to send in one request',
};

/** The documented success of /list/addProfiles: the list's ID and how many were added. */
function profilesAdded(createsList: boolean): SuccessContract {
	return {
		check: (data) => {
			if (typeof data.listId !== 'string' || data.listId.trim() === '') return 'it has no "listId"';
			return Number.isFinite(data.addedCount) ? undefined : 'it has no "addedCount"';
		},
		effect: createsList
			? 'the list may have been created and the profiles added'
			: 'the profiles may have been added',
	};
}

const properties: INodeProperties[] = [
	{
		displayName: 'List',
		name: 'listMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Existing List',
				value: 'existing',
				description: 'Add the profiles to a list by its ID',
			},
			{
				name: 'Create New List',
				value: 'new',
				description: 'Create one list in this run and add all profiles to it',
			},
		],
		default: 'existing',
	},
	{
		displayName: 'List ID',
		name: 'listId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. lst_8f2c1a',
		description: 'ID of the list to add the profiles to',
		hint: "Type it or map it, such as Create List's listId. BasicsEngage publishes no way to list its lists, so there is no dropdown.",
		displayOptions: { show: { listMode: ['existing'] } },
	},
	{
		displayName: 'List Name',
		name: 'listName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Newsletter subscribers',
		description: 'Name of the new list',
		hint: 'Read once per run: every profile of the run goes into this one new list',
		displayOptions: { show: { listMode: ['new'] } },
	},
	{
		displayName: 'List Description',
		name: 'listDescription',
		type: 'string',
		default: '',
		placeholder: 'e.g. Contacts synced from the CRM',
		description: 'Description of the new list',
		displayOptions: { show: { listMode: ['new'] } },
	},
	{
		displayName: 'Email',
		name: 'email',
		type: 'string',
		required: true,
		default: '={{ $json.email }}',
		placeholder: 'e.g. jane.doe@example.com',
		description: "The profile's email address",
		hint: 'One profile per input item',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'First Name',
				name: 'firstName',
				type: 'string',
				default: '',
				placeholder: 'e.g. Jane',
			},
			{
				displayName: 'Last Name',
				name: 'lastName',
				type: 'string',
				default: '',
				placeholder: 'e.g. Doe',
			},
		],
	},
	optionsCollection([batchSizeOption, ...retryOptions]),
];

const displayOptions = { show: { resource: ['list'], operation: ['addProfiles'] } };

export const description = updateDisplayOptions(displayOptions, properties);

interface Profile {
	itemIndex: number;
	listId?: string;
	body: IDataObject;
}

/** One request's profiles and the list they go to (undefined: the run's new list). */
interface Batch {
	listId: string | undefined;
	profiles: Profile[];
}

/**
 * Built by hand rather than by n8n's declarative routing, which sends one request per item and
 * drops `pairedItem`: this operation batches profiles across items, creates at most
 * one list per run and pairs each output with every input item it covers.
 */
export async function execute(
	this: IExecuteFunctions,
	run: OperationRun,
): Promise<OperationOutput> {
	const listMode = this.getNodeParameter('listMode', 0) as 'existing' | 'new';
	const options = readOptions(this, 'options');
	const batchSize = readNumberOption(options, batchSizeOption);
	// Adding to a list can be sent again; the request that creates the list is retried only
	// when it provably never arrived, so a run never creates two lists.
	const retryAdding = readRetryPolicy(options, true);
	const retryCreating = readRetryPolicy(options, false);

	const newList = listMode === 'new' ? readForRun(() => readNewList(this)) : undefined;
	const readListId = listMode === 'existing' ? listIdReader(this) : () => undefined;
	const { values, failures } = readItems(this, (itemIndex) =>
		readProfile(this, itemIndex, readListId),
	);

	// Batches go out one at a time: every batch after the first of a new list needs its ID.
	let createdListId: string | undefined;
	const planned = toBatches(
		values.map(({ value }) => value),
		batchSize,
	).map((batch) => ({
		itemIndexes: batch.profiles.map((profile) => profile.itemIndex),
		build: () => {
			const listId = batch.listId ?? createdListId;
			const body: IDataObject = {
				...(listId === undefined ? newList : { listId }),
				profiles: batch.profiles.map((profile) => profile.body),
			};
			const contract = profilesAdded(listId === undefined);
			return {
				request: { path: '/list/addProfiles' as const, body, contract },
				retryPolicy: listId === undefined ? retryCreating : retryAdding,
			};
		},
	}));
	return await runRequests(this, run, planned, failures, {
		concurrency: 1,
		pairsMany: true,
		toJson: (body, request, itemIndexes) => {
			const data = (body.data ?? {}) as IDataObject;
			return {
				listId: data.listId,
				addedCount: data.addedCount,
				submittedCount: itemIndexes.length,
				listCreated: request.body.listId === undefined,
			};
		},
		afterRequest: (result, request) => {
			if (request.body.listId !== undefined) return undefined;
			if (result.ok) {
				createdListId = (result.body.data as IDataObject).listId as string;
				return undefined;
			}
			// A lost answer to the creating request may hide a list that now exists; creating
			// another would break "one list per run", so the rest of the run is not sent.
			return result.failure.mayHaveTakenEffect
				? 'the request creating the list got no clear answer, so the list may exist already: check the lists in BasicsEngage and add these profiles by List ID'
				: undefined;
		},
		wording: {
			done: 'Added',
			noneDone: 'No other profile of this run was added.',
			mayHaveBeenDone: 'May have been added',
			notSent: 'These profiles were not sent, so they can be sent again later',
		},
	});
}

/** Consecutive chunks per target list, lists in order of first appearance. */
function toBatches(profiles: Profile[], batchSize: number): Batch[] {
	const byList = new Map<string | undefined, Profile[]>();
	for (const profile of profiles) {
		const group = byList.get(profile.listId);
		if (group) group.push(profile);
		else byList.set(profile.listId, [profile]);
	}
	const batches: Batch[] = [];
	for (const [listId, group] of byList) {
		for (let start = 0; start < group.length; start += batchSize) {
			batches.push({ listId, profiles: group.slice(start, start + batchSize) });
		}
	}
	return batches;
}

/** The new list's fields, read once: one run creates at most one list. */
function readNewList(context: IExecuteFunctions): IDataObject {
	const name = readTrimmed(context.getNodeParameter('listName', 0), 'List Name');
	const description = readOptionalText(
		context.getNodeParameter('listDescription', 0, ''),
		'List Description',
	);
	return { name, ...(description ? { description } : {}) };
}

/**
 * Reads the list ID per item only when it is an expression; a fixed ID is read once, which
 * keeps large runs from paying for the same parameter on every item.
 */
function listIdReader(context: IExecuteFunctions): (itemIndex: number) => string {
	const raw = context.getNode().parameters.listId;
	const read = (itemIndex: number) =>
		readTrimmed(context.getNodeParameter('listId', itemIndex), 'List ID');
	if (typeof raw === 'string' && raw.startsWith('=')) return read;
	const fixed = readForRun(() => read(0));
	return () => fixed;
}

function readProfile(
	context: IExecuteFunctions,
	itemIndex: number,
	readListId: (itemIndex: number) => string | undefined,
): Profile {
	const listId = readListId(itemIndex);
	const body: IDataObject = {
		email: readEmailAddress(context.getNodeParameter('email', itemIndex), 'Email'),
	};
	const fields = context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	for (const [field, label] of [
		['firstName', 'First Name'],
		['lastName', 'Last Name'],
	] as const) {
		const value = readOptionalText(fields[field], label)?.trim();
		if (value) body[field] = value;
	}
	return { itemIndex, listId, body };
}
