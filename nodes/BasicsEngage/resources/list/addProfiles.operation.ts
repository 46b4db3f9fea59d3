import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { SuccessContract } from '../../shared/answers';
import type { ApiFailure } from '../../shared/errors';
import { RUN_STOPPING_KINDS } from '../../shared/errors';
import type { OperationOutput } from '../../shared/output';
import { ItemFailure } from '../../shared/output';
import { paceRequest, RunStop } from '../../shared/queue';
import { optionsCollection } from '../../shared/properties';
import type { OperationRun } from '../../shared/run';
import { requestOnce } from '../../shared/once';
import { readRetryPolicy, retryOptions } from '../../shared/retry';
import { stopSignal } from '../../shared/transport';
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
	{ memory, settings }: OperationRun,
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
	const continueOnFail = this.continueOnFail();
	const output: OperationOutput = [...failures];
	const profiles = values.map(({ value }) => value);

	let createdListId: string | undefined;
	let listMayExist = false;
	const stop = new RunStop(this);
	const signal = stopSignal(this);
	const batches = toBatches(profiles, batchSize);
	for (const [requestIndex, batch] of batches.entries()) {
		const itemIndexes = batch.profiles.map((profile) => profile.itemIndex);
		if (!stop.stopped) await paceRequest(settings, requestIndex, signal);
		if (stop.stopped) {
			output.push(...itemFailures(stop.notSent(notSentWhatNow(listMayExist)), itemIndexes));
			continue;
		}
		const listId = batch.listId ?? createdListId;
		const body: IDataObject = {
			...(listId === undefined ? newList : { listId }),
			profiles: batch.profiles.map((profile) => profile.body),
		};
		// Batches are cut the same way on every try of the run, so their items name them.
		const result = await requestOnce(
			this,
			settings,
			{ path: '/list/addProfiles', body, contract: profilesAdded(listId === undefined) },
			listId === undefined ? retryCreating : retryAdding,
			memory,
			`batch:${itemIndexes.join(',')}`,
		);
		stop.record(result);
		if (!result.ok) {
			// A lost answer to the creating request may hide a list that now exists; creating
			// another would break "one list per run", so the rest of the run is not sent.
			listMayExist = listId === undefined && result.failure.mayHaveTakenEffect;
			// Under Stop Workflow the run ends here too: the router throws the first failure.
			if (listMayExist) {
				stop.stopFor(
					result.failure,
					'the request creating the list got no clear answer, so the list may exist already',
				);
			} else if (!continueOnFail || RUN_STOPPING_KINDS.has(result.failure.kind)) {
				stop.stopFor(result.failure, 'an earlier request of this run was refused');
			}
			output.push(...itemFailures(result.failure, itemIndexes));
			continue;
		}
		const data = (result.body.data ?? {}) as IDataObject;
		const listCreated = listId === undefined;
		if (listCreated) createdListId = data.listId as string;
		output.push({
			json: {
				listId: data.listId,
				addedCount: data.addedCount,
				submittedCount: batch.profiles.length,
				listCreated,
			},
			pairedItem: itemIndexes.map((item) => ({ item })),
		});
	}
	// Input order on every output, as Send Email keeps it: by each entry's first input item.
	return output.sort((a, b) => firstItemIndex(a) - firstItemIndex(b));
}

function firstItemIndex(entry: OperationOutput[number]): number {
	if (entry instanceof ItemFailure) return entry.itemIndex;
	const paired = entry.pairedItem as Array<{ item: number }>;
	return paired[0].item;
}

function itemFailures(failure: ApiFailure, itemIndexes: number[]): ItemFailure[] {
	return itemIndexes.map((itemIndex) => new ItemFailure(failure, itemIndex));
}

function notSentWhatNow(listMayExist: boolean): string {
	return `These profiles were not sent, so they can be sent again later${
		listMayExist ? ' (check the lists in BasicsEngage and add them by List ID)' : ''
	}`;
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
