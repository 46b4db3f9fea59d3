// @ts-check
'use strict';

const {
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	runNode,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({
	lists: [
		{ listId: 'lst_existing', name: 'Existing' },
		{ listId: 'lst_other', name: 'Other' },
	],
});

const listRequests = () => sandbox.requestsTo('/list/addProfiles');

describe('Add Profiles to List', () => {
	test('spec rule 2: without listId a new list is created from name and description', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ listName: 'CRM sync', listDescription: 'From the CRM' }),
			items: contacts(2),
		});

		expect(result.error).toBeUndefined();
		expect(listRequests().map((request) => request.body)).toEqual([
			{
				name: 'CRM sync',
				description: 'From the CRM',
				profiles: [{ email: 'contact0@customer.test' }, { email: 'contact1@customer.test' }],
			},
		]);
		expect(sandbox.state.lists.size).toBe(3);
		const created = [...sandbox.state.lists.values()].find((list) => list.name === 'CRM sync');
		expect(result.success).toEqual([
			{
				json: { listId: created?.listId, addedCount: 2, submittedCount: 2, listCreated: true },
				pairedItem: [{ item: 0 }, { item: 1 }],
			},
		]);
	});

	test('spec rule 1: with listId the profiles are added to that list', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ listMode: 'existing', listId: 'lst_existing' }),
			items: contacts(3),
		});

		expect(listRequests().map((request) => request.body.listId)).toEqual(['lst_existing']);
		expect(listRequests()[0].body).not.toHaveProperty('name');
		expect(sandbox.state.lists.get('lst_existing')?.profiles.size).toBe(3);
		expect(result.success.map((item) => item.json)).toEqual([
			{ listId: 'lst_existing', addedCount: 3, submittedCount: 3, listCreated: false },
		]);
	});

	test('profile fields: email plus first and last name from additional fields', async () => {
		await runNode(sandbox, {
			parameters: addProfilesParameters({
				additionalFields: {
					firstName: '={{ $json.firstName }}',
					lastName: '={{ $json.lastName }}',
				},
			}),
			items: contacts(1),
		});
		expect(listRequests()[0].body.profiles).toEqual([
			{ email: 'contact0@customer.test', firstName: 'First0', lastName: 'Last0' },
		]);
	});

	test.each(/** @type {const} */ (['Authroization', 'Authorization']))(
		'spec header: each request sends Authroization (as published) and Authorization, so a strict server that reads only %s accepts it',
		async (listAuthHeader) => {
			sandbox.setOptions({ listAuthHeader });
			const result = await runNode(sandbox, {
				parameters: addProfilesParameters(),
				items: contacts(2),
			});
			expect(result.error).toBeUndefined();
			expect(result.success.map((item) => item.json.addedCount)).toEqual([2]);
		},
	);

	test('addedCount reports what the API added (duplicates are not added twice)', async () => {
		const items = [...contacts(2), contacts(1)[0]];
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ listMode: 'existing', listId: 'lst_existing' }),
			items,
		});
		expect(result.success.map((item) => item.json)).toEqual([
			{ listId: 'lst_existing', addedCount: 2, submittedCount: 3, listCreated: false },
		]);
	});
});

// Up to Concurrency in flight, in input order: test/node/operations.test.js. A new list at the
// default Concurrency (5): the request creating it goes first and alone, and every other batch
// carries its listId, so goes after its answer: test/fixtures/add-profiles-new-list-in-batches.
describe('Add Profiles: Concurrency', () => {
	test('a new list whose creating request got no clear answer: nothing else is sent, as at Concurrency 1', async () => {
		sandbox.injectFaults([{ path: '/list/addProfiles', action: 'drop' }]);
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2, concurrency: 5, retries: 0 } }),
			items: contacts(10),
			onError: 'continueErrorOutput',
		});
		expect(listRequests()).toHaveLength(1);
		expectEachInputExactlyOnce(result, 10);
		expect(result.errors.at(-1)?.json.error).toMatch(/the list may exist already/);
	});
});

const REFUSED = { status: 400, body: { status: 'error', error: 'Bad' } };
const DROP = { action: /** @type {const} */ ('drop') };

test.each([
	['n8n’s retry of the refused batch adds to that list', [REFUSED]],
	['with no clear answer, and n8n’s retry creates no other', [REFUSED, DROP]],
])(
	'one list per run under Retry On Fail: the batch creating the list was refused, the next one created it, %s',
	async (_, faults) => {
		sandbox.injectFaults(faults.map((fault) => ({ path: '/list/addProfiles', ...fault })));
		const listsBefore = sandbox.state.lists.size;
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2, concurrency: 1 } }),
			items: contacts(4),
			onError: 'continueRegularOutput',
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 1,
		});
		expect(sandbox.state.lists.size - listsBefore).toBe(1);
		expectEachInputExactlyOnce(result, 4);
	},
);

test('Stop Workflow with a List ID per item (sent list by list): the error, on the first failed item in input order, lists what the run added', async () => {
	sandbox.injectFaults([{ action: 'delay', delayMs: 0 }, REFUSED]);
	const lists = ['lst_existing', 'lst_other', 'lst_existing', 'lst_other'];
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({
			listMode: 'existing',
			listId: '={{ $json.list }}',
			options: { batchSize: 1, concurrency: 1 },
		}),
		items: contacts(4).map((item, index) => ({ ...item, list: lists[index] })),
	});
	// Items 0 and 2 went first; item 2 was refused, so items 1 and 3 were not sent.
	expect(result.error?.description).toContain('Added in this run (item indexes): 0.');
});

// How a number option is read: test/unit/readers.test.js; Batch Size is Add Profiles' own.
test.each([
	[{ options: { batchSize: '={{ 1001 }}' } }, 'Batch Size must be a whole number from 1 to 1000'],
	[{ options: { batchSize: '={{ NaN }}' } }, 'Batch Size must be a whole number from 1 to 1000'],
	[{ listName: '={{ "" }}' }, 'List Name is required'],
	[{ listName: '   ' }, 'List Name is required'],
])(
	'Add Profiles with %j: every item fails, naming the setting; nothing is sent',
	async (parameters, error) => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters(parameters),
			items: contacts(3),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(0);
		expect(result.errors.map((item) => item.json.error)).toEqual(Array(3).fill(error));
		expectEachInputExactlyOnce(result, 3);
	},
);

// Mapping Mode "Map Automatically": each item's own fields, matched by whole name after
// lower-casing and dropping spaces and punctuation (the rule: test/unit/auto-map.test.js), no
// expression evaluated per item. "Map Each Field Manually" is the default.
describe('Add Profiles, Map Automatically', () => {
	/** @param {Record<string, unknown>} [overrides] */
	const automatic = (overrides = {}) =>
		addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_existing',
			mappingMode: 'autoMapInputData',
			...overrides,
		});

	const sentProfiles = () => listRequests().flatMap((request) => request.body.profiles);

	test('values are checked like the manual ones: a bad address or an object fails its item', async () => {
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items: [{ email: 'not-an-address' }, { email: 'a@customer.test', firstName: { a: 1 } }],
			onError: 'continueErrorOutput',
		});

		expect(sentProfiles()).toEqual([]);
		expect(result.errors.map((item) => item.json.error)).toEqual([
			'Email is not a valid email address: "not-an-address"',
			'First Name must be text, not an object',
		]);
	});

	test('no expression is evaluated per item: the manual fields are not read', async () => {
		const result = await runNode(sandbox, {
			parameters: automatic({
				email: '={{ $json.missing.deeper }}',
				additionalFields: { firstName: '={{ $json.missing.deeper }}' },
			}),
			items: contacts(2),
		});

		expect(result.error).toBeUndefined();
		expect(sentProfiles().map((profile) => profile.email)).toEqual([
			'contact0@customer.test',
			'contact1@customer.test',
		]);
	});

	test('everything else is unchanged: batches, one new list per run, every output paired to its batch', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({
				mappingMode: 'autoMapInputData',
				options: { batchSize: 2 },
			}),
			items: contacts(3),
		});

		const lists = sandbox.requests.map(
			(request) => request.body.listId ?? `new:${request.body.name}`,
		);
		expect(lists).toEqual(['new:Newsletter', expect.stringMatching(/./)]);
		expect(sandbox.state.lists.size).toBe(3);
		expect(result.success.map((item) => item.pairedItem)).toEqual([
			[{ item: 0 }, { item: 1 }],
			[{ item: 2 }],
		]);
	});

	test('a workflow saved before Mapping Mode (no parameter) maps each field manually, as before', async () => {
		const parameters = addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_existing',
			email: '={{ $json.address }}',
		});
		expect(parameters).not.toHaveProperty('mappingMode');
		await runNode(sandbox, {
			parameters,
			items: [{ address: 'a@customer.test', email: 'b@customer.test' }],
		});
		expect(sentProfiles()).toEqual([{ email: 'a@customer.test' }]);
	});

	test('real shapes in one run: each item maps or fails alone, named, and the others are sent', async () => {
		// From n8n-nodes-base 2.41.1 (more, and each refusal's advice: test/unit/auto-map.test.js):
		// Facebook Lead Ads, Calendly, Pipedrive 2, Google Calendar, HubSpot without email.
		const items = [
			{ id: '1', data: { email: 'lead@customer.test', first_name: 'Lea', last_name: 'Dee' } },
			{ event: 'invitee.created', payload: { email: 'inv@customer.test', first_name: 'Ivy' } },
			{ emails: [{ value: 'a@customer.test' }, { value: 'b@customer.test' }] },
			{ creator: { email: 'c@customer.test' }, organizer: { email: 'o@customer.test' } },
			{ vid: 51, properties: { firstname: { value: 'Codey' }, lastmodifieddate: { value: '1' } } },
		];
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items,
			onError: 'continueErrorOutput',
		});

		expect(sentProfiles()).toEqual([
			{ email: 'lead@customer.test', firstName: 'Lea', lastName: 'Dee' },
			{ email: 'inv@customer.test', firstName: 'Ivy' },
		]);
		expect(
			result.errors.map((item) => [item.pairedItem, item.json.details.kind, item.json.error]),
		).toEqual([
			[
				{ item: 2 },
				'invalid_input',
				'The field "emails" holds 2 different addresses and none is marked primary',
			],
			[{ item: 3 }, 'invalid_input', 'This item has no email field for Map Automatically'],
			[{ item: 4 }, 'invalid_input', 'This item has no email field for Map Automatically'],
		]);
		expect(result.errors[2].json.details.description).toContain(
			'in the HubSpot node, add email to Options > Contact Properties to Include',
		);
		expectEachInputExactlyOnce(result, items.length);
	});
});
