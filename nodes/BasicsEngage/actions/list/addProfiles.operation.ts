import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { concurrencyOption, optionsCollection, retryOptions } from '../../helpers/options';
import { readForRun, readNumberOption, readOptionalText, readTrimmed } from '../../helpers/read';
import type { DeclareRequests, ItemBody, SuccessContract } from '../../transport';
import { autoMapper, toProfile } from './autoMap';

const batchSizeOption: INodeProperties = {
	displayName: 'Batch Size',
	name: 'batchSize',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1000, numberPrecision: 0 },
	default: 100,
	description: 'How many profiles to send in one request',
};

const batchConcurrency = concurrencyOption(
	'How many batches to send at the same time. A new list is created by the first batch, alone.',
);

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
				name: 'Create New List',
				value: 'new',
				description: 'Create one list in this run and add all profiles to it',
			},
			{
				name: 'Existing List',
				value: 'existing',
				description: 'Add the profiles to a list by its ID',
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
		hint: "Type or map it, such as Create List's 'listId': BasicsEngage publishes no way to list its lists, so no dropdown",
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
		displayName: 'Mapping Mode',
		name: 'mappingMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Map Automatically',
				value: 'autoMapInputData',
				description: "Take them from the item's own fields, by name: much faster on large runs",
			},
			{
				name: 'Map Each Field Manually',
				value: 'defineBelow',
				description: 'Set the email and names with the fields below, expressions included',
			},
		],
		default: 'defineBelow',
	},
	{
		displayName:
			"Each item needs its own email field ('email', 'Email Address', 'primaryEmail', ...): at the top level, else in one envelope such as 'data', 'payload', 'body', 'fields' or 'properties'. 'First Name' and 'Last Name' (or 'given_name', 'Surname', ...) beside it are taken. An address that may be someone else's (owner, organizer, cc...) or one of several is never guessed: the item fails, naming the fields.",
		name: 'autoMapNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { mappingMode: ['autoMapInputData'] } },
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
		displayOptions: { show: { mappingMode: ['defineBelow'] } },
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: { show: { mappingMode: ['defineBelow'] } },
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
	optionsCollection([batchSizeOption, batchConcurrency, ...retryOptions()]),
];

const displayOptions = { show: { resource: ['list'], operation: ['addProfiles'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/** Stands in a dry run for the ID the request creating the new list would get back. */
const CREATED_LIST_ID = '(the ID of the list the first request creates)';

/**
 * One request per batch of profiles, several in flight at once. A new list is created by the
 * first batch, alone, since every later batch needs the ID its answer gives (or by the next,
 * should the first be refused). Each output pairs with the items its batch covers.
 */
export const requests: DeclareRequests = function (options) {
	const batchSize = readNumberOption(options, batchSizeOption);
	const newList =
		this.getNodeParameter('listMode', 0) === 'new'
			? readForRun(() => readNewList(this))
			: undefined;
	const readListId = newList ? () => undefined : listIdReader(this);
	const readProfile =
		this.getNodeParameter('mappingMode', 0, 'defineBelow') === 'autoMapInputData'
			? autoMapper(this.getInputData())
			: (itemIndex: number) => readProfileFields(this, itemIndex);
	return {
		path: '/list/addProfiles',
		// The batch's list (none: the run's new list) and the profile, as `profiles` lists it.
		body: (itemIndex) => ({ listId: readListId(itemIndex), profile: readProfile(itemIndex) }),
		shape: {
			per: 'batch',
			batches: (entries) =>
				toBatches(entries, batchSize).map(({ listId, profiles }) => ({
					itemIndexes: profiles.map((entry) => entry.itemIndex),
					body: {
						...(listId === undefined ? {} : { listId }),
						profiles: profiles.map((entry) => entry.body.profile),
					},
				})),
			concurrency: readNumberOption(options, batchConcurrency),
			firstAlone: newList && {
				fields: newList,
				learn: (answer) => ({ listId: (answer.data as IDataObject).listId }),
				dryRun: { listId: CREATED_LIST_ID },
				// A lost answer to the creating request may hide a list that now exists; creating
				// another would break "one list per run", so the rest of the run is not sent.
				unclear:
					'the request creating the list got no clear answer, so the list may exist already: check the lists in BasicsEngage and add these profiles by List ID',
			},
		},
		contract: (body) => profilesAdded(body.listId === undefined),
		toJson: (answer, sent, itemIndexes) => {
			const data = answer.data as IDataObject;
			return {
				listId: data.listId,
				addedCount: data.addedCount,
				submittedCount: itemIndexes.length,
				listCreated: sent.listId === undefined,
			};
		},
		// Adding to a list can be sent again; the request that creates the list is not, once it
		// may have arrived, so a run never creates two lists.
		repeatable: (body) => body.listId !== undefined,
		done: 'Added',
		misspelledAuthHeader: true,
	};
};

/** Consecutive chunks per target list, lists in order of first appearance (exported for its unit table). */
export function toBatches(
	entries: ItemBody[],
	batchSize: number,
): Array<{ listId: string | undefined; profiles: ItemBody[] }> {
	const byList = new Map<string | undefined, ItemBody[]>();
	for (const entry of entries) {
		const listId = entry.body.listId as string | undefined;
		const group = byList.get(listId);
		if (group) group.push(entry);
		else byList.set(listId, [entry]);
	}
	return [...byList].flatMap(([listId, group]) =>
		Array.from({ length: Math.ceil(group.length / batchSize) }, (_, batch) => ({
			listId,
			profiles: group.slice(batch * batchSize, (batch + 1) * batchSize),
		})),
	);
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

function readProfileFields(context: IExecuteFunctions, itemIndex: number): IDataObject {
	const email = context.getNodeParameter('email', itemIndex);
	const fields = context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	return toProfile({ email, firstName: fields.firstName, lastName: fields.lastName });
}
