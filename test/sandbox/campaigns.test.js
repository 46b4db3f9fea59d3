// @ts-check
'use strict';

/**
 * Tests of the further published endpoints (Create List, Create Campaign, Send Campaign) over
 * real HTTP, named like ./sandbox.test.js: "spec:" = what those pages publish, "assumption:" =
 * README "Assumptions where the spec is silent", "fault:" / "sandbox:" = test tooling.
 */

const { startSandbox } = require('./server');

const DEMO_KEY = 'be_sandbox_demo_key';
const AUTH = { authorization: `Bearer ${DEMO_KEY}` };
const LIST_AUTH = { authroization: `Bearer ${DEMO_KEY}` };

/** @type {import('./server').SandboxHandle} */
let sandbox;

beforeAll(async () => {
	sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

// ---------------------------------------------------------------- helpers

/**
 * POSTs a JSON body (strings are sent as they are) and reads the answer.
 * @param {string} route path under basePath
 * @param {unknown} body
 * @param {Record<string, string>} headers
 * @param {import('./server').SandboxHandle} [target]
 */
async function post(route, body, headers, target = sandbox) {
	const response = await fetch(`${target.baseUrl}${route}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
	});
	const text = await response.text();
	const isJson = response.headers.get('content-type')?.startsWith('application/json');
	return { status: response.status, body: isJson && text ? JSON.parse(text) : undefined, text };
}

/** @param {unknown} body @param {Record<string, string>} [headers] */
const createList = (body, headers = AUTH) => post('/list/create', body, headers);

/** @param {unknown} body @param {Record<string, string>} [headers] */
const createCampaign = (body, headers = AUTH) => post('/campaign/create', body, headers);

/** @param {unknown} body @param {Record<string, string>} [headers] */
const sendCampaign = (body, headers = AUTH) => post('/campaign/send', body, headers);

const CAMPAIGN_ID = /^[0-9a-f]{24}$/;

/** The spec's error shape: status 'error' plus exactly one text field. */
const errorBody = (/** @type {'error' | 'message'} */ field, /** @type {string} */ text) => ({
	status: 'error',
	[field]: text,
});

/**
 * Adds profiles through Add Profiles and returns their IDs, in the order given.
 * @param {string[]} emails
 */
async function profileIds(emails) {
	const added = await post(
		'/list/addProfiles',
		{ name: 'Source', profiles: emails.map((email) => ({ email })) },
		LIST_AUTH,
	);
	expect(added.status).toBe(200);
	return emails.map((email) => sandbox.state.profileIdsByEmail.get(email.toLowerCase()) ?? '');
}

/** @param {Record<string, unknown>} [overrides] */
const validList = (overrides = {}) => ({
	listName: 'Newsletter',
	listDescription: 'Monthly news',
	...overrides,
});

// ---------------------------------------------------------------- POST /list/create

describe('POST /list/create (spec)', () => {
	test('spec: createList creates an empty list from listName and listDescription: 200 with data.listId', async () => {
		const { status, body } = await createList(validList());

		expect(status).toBe(200);
		expect(body).toEqual({ status: 'success', data: { listId: expect.any(String) } });
		const list = sandbox.state.lists.get(body.data.listId);
		expect(list).toMatchObject({ name: 'Newsletter', description: 'Monthly news' });
		expect(list?.profiles.size).toBe(0);
	});

	test('spec: createList with profile IDs puts those existing profiles in the list', async () => {
		const [annId, bobId] = await profileIds(['ann@customer.test', 'bob@customer.test']);

		const { status, body } = await createList(validList({ profiles: [bobId, annId] }));

		expect(status).toBe(200);
		const list = sandbox.state.lists.get(body.data.listId);
		expect([...(list?.profiles.values() ?? [])]).toEqual([
			{ profileId: bobId, email: 'bob@customer.test' },
			{ profileId: annId, email: 'ann@customer.test' },
		]);
	});

	test('spec: createList reads the correctly spelled Authorization header; a wrong or missing key answers 401 with message', async () => {
		for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: DEMO_KEY }]) {
			const { status, body } = await createList(validList(), headers);
			expect({ headers, status, body }).toEqual({
				headers,
				status: 401,
				body: errorBody('message', 'Invalid API key'),
			});
		}
		expect(sandbox.state.lists.size).toBe(0);
	});

	test("spec: createList takes listName and listDescription, not Add Profiles' name and description", async () => {
		const { status, body } = await createList({ name: 'Newsletter', description: 'Monthly' });
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Field "listName" is required'));
	});
});

describe('POST /list/create (assumptions where the spec is silent)', () => {
	test('assumption: createList ignores listAuthHeader and does not read the misspelled header', async () => {
		expect((await createList(validList(), LIST_AUTH)).status).toBe(401);
		sandbox.setOptions({ listAuthHeader: 'either' });
		expect((await createList(validList(), LIST_AUTH)).status).toBe(401);
		expect((await createList(validList())).status).toBe(200);
	});

	test('assumption: createList checks authentication before the body, and a body that is not JSON answers 400', async () => {
		expect((await createList('{oops', {})).status).toBe(401);
		expect(await createList('{oops')).toMatchObject({
			status: 400,
			body: errorBody('error', 'Request body must be valid JSON'),
		});
		expect((await createList([validList()])).body).toEqual(
			errorBody('error', 'Request body must be a JSON object'),
		);
	});

	test('assumption: missing listName or listDescription answers 400 naming the field', async () => {
		for (const field of ['listName', 'listDescription']) {
			const body = validList();
			delete body[field];
			const answer = await createList(body);
			expect({ field, status: answer.status, body: answer.body }).toEqual({
				field,
				status: 400,
				body: errorBody('error', `Field "${field}" is required`),
			});
		}
	});

	test('assumption: non-string listName or listDescription answers 400 naming the field', async () => {
		for (const field of ['listName', 'listDescription']) {
			for (const value of [42, null, ['x']]) {
				const answer = await createList(validList({ [field]: value }));
				expect({ field, value, status: answer.status, body: answer.body }).toEqual({
					field,
					value,
					status: 400,
					body: errorBody('error', `Field "${field}" must be a string`),
				});
			}
		}
	});

	test('assumption: a blank listName answers 400; an empty listDescription is accepted', async () => {
		for (const listName of ['', '   ']) {
			const { status, body } = await createList(validList({ listName }));
			expect({ listName, status, body }).toEqual({
				listName,
				status: 400,
				body: errorBody('error', 'Field "listName" must not be empty'),
			});
		}
		expect((await createList(validList({ listDescription: '' }))).status).toBe(200);
	});

	test('assumption: profiles that is not an array of strings answers 400, and nothing is stored', async () => {
		const [annId] = await profileIds(['ann@customer.test']);
		const listsBefore = sandbox.state.lists.size;
		const cases = [
			[annId, 'Field "profiles" must be an array of profile IDs'],
			[null, 'Field "profiles" must be an array of profile IDs'],
			[[annId, 7], 'profiles[1] must be a profile ID string'],
			[[{ email: 'ann@customer.test' }], 'profiles[0] must be a profile ID string'],
		];
		for (const [profiles, message] of cases) {
			const { status, body } = await createList(validList({ profiles }));
			expect({ profiles, status, body }).toEqual({
				profiles,
				status: 400,
				body: errorBody('error', message),
			});
		}
		expect(sandbox.state.lists.size).toBe(listsBefore);
	});

	test('assumption: an unknown profile ID answers 404 naming it, and no list is created', async () => {
		const [annId] = await profileIds(['ann@customer.test']);
		const listsBefore = sandbox.state.lists.size;
		for (const unknown of ['prof_missing', '', 'ann@customer.test']) {
			const { status, body } = await createList(validList({ profiles: [annId, unknown] }));
			expect({ unknown, status, body }).toEqual({
				unknown,
				status: 404,
				body: errorBody('error', `Profile "${unknown}" not found`),
			});
		}
		expect(sandbox.state.lists.size).toBe(listsBefore);
	});

	test('assumption: an empty profiles array creates an empty list, and a repeated ID is added once', async () => {
		const [annId] = await profileIds(['ann@customer.test']);
		const empty = await createList(validList({ profiles: [] }));
		expect(sandbox.state.lists.get(empty.body.data.listId)?.profiles.size).toBe(0);

		const repeated = await createList(validList({ profiles: [annId, annId] }));
		expect([
			...(sandbox.state.lists.get(repeated.body.data.listId)?.profiles.keys() ?? []),
		]).toEqual(['ann@customer.test']);
	});

	test('assumption: two lists may share a name; each gets its own listId', async () => {
		const first = await createList(validList());
		const second = await createList(validList());
		expect(first.body.data.listId).toMatch(/^list_[0-9a-f]{16}$/);
		expect(second.body.data.listId).not.toBe(first.body.data.listId);
		expect(sandbox.state.lists.size).toBe(2);
	});

	test('assumption: the answer has only listId, and unknown fields are ignored', async () => {
		const { body } = await createList(validList({ color: 'blue' }));
		expect(Object.keys(body.data)).toEqual(['listId']);
		expect(sandbox.state.lists.get(body.data.listId)).not.toHaveProperty('color');
	});

	test('assumption: a created list is a list like any other: Add Profiles adds to it by listId', async () => {
		const [annId] = await profileIds(['ann@customer.test']);
		const listId = (await createList(validList({ profiles: [annId] }))).body.data.listId;

		const added = await post(
			'/list/addProfiles',
			{ listId, profiles: [{ email: 'ANN@customer.test' }, { email: 'bob@customer.test' }] },
			LIST_AUTH,
		);
		expect(added.body).toEqual({ status: 'success', data: { listId, addedCount: 1 } });
	});
});

// ---------------------------------------------------------------- POST /campaign/create

/** @param {Record<string, unknown>} [overrides] */
const validCampaign = (overrides = {}) => ({
	name: 'Holiday Sale',
	subject: 'Exclusive 50% Off',
	content: '<p>Happy Holidays!</p>',
	...overrides,
});

/** Creates lists through Create List and returns their IDs. @param {number} count */
async function listIds(count) {
	const ids = [];
	for (let index = 0; index < count; index++) {
		ids.push((await createList(validList({ listName: `List ${index}` }))).body.data.listId);
	}
	return ids;
}

describe('POST /campaign/create (spec)', () => {
	test('spec: createCampaign stores the campaign and answers 200 with data.campaign: _id (24 hex), name, subject, content', async () => {
		const { status, body } = await createCampaign(validCampaign());

		expect(status).toBe(200);
		expect(body).toEqual({
			status: 'success',
			data: {
				campaign: expect.objectContaining({
					_id: expect.stringMatching(CAMPAIGN_ID),
					name: 'Holiday Sale',
					subject: 'Exclusive 50% Off',
					content: '<p>Happy Holidays!</p>',
				}),
			},
		});
		expect(sandbox.state.campaigns.get(body.data.campaign._id)).toMatchObject({
			name: 'Holiday Sale',
			subject: 'Exclusive 50% Off',
			content: '<p>Happy Holidays!</p>',
		});
	});

	test('spec: createCampaign takes the list IDs in the published, misspelled recepientList', async () => {
		const [first, second] = await listIds(2);
		const { status, body } = await createCampaign(
			validCampaign({ recepientList: [first, second] }),
		);
		expect(status).toBe(200);
		expect(sandbox.state.campaigns.get(body.data.campaign._id)?.recepientList).toEqual([
			first,
			second,
		]);
	});

	test('spec: content and recepientList are optional', async () => {
		const { status, body } = await createCampaign({ name: 'Plain', subject: 'Hello' });
		expect(status).toBe(200);
		expect(sandbox.state.campaigns.get(body.data.campaign._id)).toMatchObject({
			name: 'Plain',
			subject: 'Hello',
			recepientList: [],
		});
	});

	test('spec: createCampaign reads the correctly spelled Authorization header; a wrong or missing key answers 401 with message', async () => {
		const attempts = [
			{},
			{ authorization: 'Bearer wrong' },
			{ authorization: DEMO_KEY },
			LIST_AUTH,
		];
		for (const headers of attempts) {
			const { status, body } = await createCampaign(validCampaign(), headers);
			expect({ headers, status, body }).toEqual({
				headers,
				status: 401,
				body: errorBody('message', 'Invalid API key'),
			});
		}
		expect(sandbox.state.campaigns.size).toBe(0);
	});
});

describe('POST /campaign/create (assumptions where the spec is silent)', () => {
	test('assumption: by default the correctly spelled recipientList is ignored like any unknown field', async () => {
		const [listId] = await listIds(1);
		const { status, body } = await createCampaign(validCampaign({ recipientList: [listId] }));
		expect(status).toBe(200);
		expect(body.data.campaign.recepientList).toEqual([]);
		expect(sandbox.state.campaigns.get(body.data.campaign._id)?.recepientList).toEqual([]);

		// Not read, so not validated either.
		expect((await createCampaign(validCampaign({ recipientList: 'oops' }))).status).toBe(200);
	});

	test('assumption: campaignListField "recipientList" reads only the correct spelling, and names it in errors', async () => {
		sandbox.setOptions({ campaignListField: 'recipientList' });
		const [first, second] = await listIds(2);

		const { body } = await createCampaign(
			validCampaign({ recipientList: [first], recepientList: [second] }),
		);
		expect(sandbox.state.campaigns.get(body.data.campaign._id)?.recepientList).toEqual([first]);
		// Stored and echoed under the published name, whichever spelling was read.
		expect(body.data.campaign).toMatchObject({ recepientList: [first] });
		expect(body.data.campaign).not.toHaveProperty('recipientList');

		expect((await createCampaign(validCampaign({ recipientList: 'x' }))).body).toEqual(
			errorBody('error', 'Field "recipientList" must be an array of list IDs'),
		);
	});

	test('assumption: campaignListField "either" reads both spellings and combines them, each list once', async () => {
		sandbox.setOptions({ campaignListField: 'either' });
		const [first, second, third] = await listIds(3);

		const published = await createCampaign(validCampaign({ recepientList: [first] }));
		const correct = await createCampaign(validCampaign({ recipientList: [second] }));
		const both = await createCampaign(
			validCampaign({ recepientList: [first, second], recipientList: [second, third] }),
		);

		expect(published.body.data.campaign.recepientList).toEqual([first]);
		expect(correct.body.data.campaign.recepientList).toEqual([second]);
		expect(both.body.data.campaign.recepientList).toEqual([first, second, third]);
	});

	test('assumption: the answer echoes the stored campaign: _id, name, subject, content, recepientList, createdAt', async () => {
		const clock = new Date('2025-03-01T10:00:00Z');
		sandbox.setOptions({ now: () => clock });
		const [listId] = await listIds(1);

		const { body } = await createCampaign(validCampaign({ recepientList: [listId], extra: 1 }));

		expect(body.data.campaign).toEqual({
			_id: expect.stringMatching(CAMPAIGN_ID),
			name: 'Holiday Sale',
			subject: 'Exclusive 50% Off',
			content: '<p>Happy Holidays!</p>',
			recepientList: [listId],
			createdAt: '2025-03-01T10:00:00.000Z',
		});
		expect(sandbox.state.campaigns.get(body.data.campaign._id)).toEqual(body.data.campaign);
	});

	test('assumption: without content the campaign has no content field', async () => {
		const { body } = await createCampaign(validCampaign({ content: undefined }));
		expect(body.data.campaign).not.toHaveProperty('content');
	});

	test('assumption: createCampaign checks authentication before the body, and a body that is not JSON answers 400', async () => {
		expect((await createCampaign('{oops', {})).status).toBe(401);
		expect(await createCampaign('{oops')).toMatchObject({
			status: 400,
			body: errorBody('error', 'Request body must be valid JSON'),
		});
		expect((await createCampaign('"text"')).body).toEqual(
			errorBody('error', 'Request body must be a JSON object'),
		);
	});

	test('assumption: missing name or subject answers 400 naming the field', async () => {
		for (const field of ['name', 'subject']) {
			const answer = await createCampaign(validCampaign({ [field]: undefined }));
			expect({ field, status: answer.status, body: answer.body }).toEqual({
				field,
				status: 400,
				body: errorBody('error', `Field "${field}" is required`),
			});
		}
	});

	test('assumption: non-string name, subject or content answers 400 naming the field', async () => {
		for (const field of ['name', 'subject', 'content']) {
			for (const value of [42, null]) {
				const answer = await createCampaign(validCampaign({ [field]: value }));
				expect({ field, value, status: answer.status, body: answer.body }).toEqual({
					field,
					value,
					status: 400,
					body: errorBody('error', `Field "${field}" must be a string`),
				});
			}
		}
	});

	test('assumption: a blank name or an empty subject answers 400; empty content is accepted', async () => {
		for (const [overrides, field] of [
			[{ name: '' }, 'name'],
			[{ name: '  ' }, 'name'],
			[{ subject: '' }, 'subject'],
		]) {
			const answer = await createCampaign(validCampaign(overrides));
			expect({ overrides, status: answer.status, body: answer.body }).toEqual({
				overrides,
				status: 400,
				body: errorBody('error', `Field "${field}" must not be empty`),
			});
		}
		expect((await createCampaign(validCampaign({ content: '' }))).status).toBe(200);
	});

	test('assumption: recepientList that is not an array of strings answers 400, and nothing is stored', async () => {
		const [listId] = await listIds(1);
		const cases = [
			[listId, 'Field "recepientList" must be an array of list IDs'],
			[null, 'Field "recepientList" must be an array of list IDs'],
			[[listId, 7], 'recepientList[1] must be a list ID string'],
			[[{ listId }], 'recepientList[0] must be a list ID string'],
		];
		for (const [recepientList, message] of cases) {
			const { status, body } = await createCampaign(validCampaign({ recepientList }));
			expect({ recepientList, status, body }).toEqual({
				recepientList,
				status: 400,
				body: errorBody('error', message),
			});
		}
		expect(sandbox.state.campaigns.size).toBe(0);
	});

	test('assumption: an unknown list ID answers 404 naming it, and no campaign is stored', async () => {
		const [listId] = await listIds(1);
		for (const unknown of ['list_missing', '']) {
			const { status, body } = await createCampaign(
				validCampaign({ recepientList: [listId, unknown] }),
			);
			expect({ unknown, status, body }).toEqual({
				unknown,
				status: 404,
				body: errorBody('error', `List "${unknown}" not found`),
			});
		}
		expect(sandbox.state.campaigns.size).toBe(0);
	});

	test('assumption: a repeated list ID is kept once, and an empty recepientList is accepted', async () => {
		const [listId] = await listIds(1);
		const repeated = await createCampaign(validCampaign({ recepientList: [listId, listId] }));
		expect(repeated.body.data.campaign.recepientList).toEqual([listId]);
		expect((await createCampaign(validCampaign({ recepientList: [] }))).status).toBe(200);
	});

	test('assumption: two campaigns may share a name; each gets its own _id', async () => {
		const first = await createCampaign(validCampaign());
		const second = await createCampaign(validCampaign());
		expect(second.body.data.campaign._id).not.toBe(first.body.data.campaign._id);
		expect(sandbox.state.campaigns.size).toBe(2);
	});
});

// ---------------------------------------------------------------- POST /campaign/send

/**
 * A campaign whose lists hold these emails (one list per array), via the HTTP endpoints.
 * @param {string[][]} lists emails per list
 * @returns {Promise<string>} the campaign's _id
 */
async function campaignFor(lists) {
	const ids = [];
	for (const emails of lists) {
		const added = await post(
			'/list/addProfiles',
			{ name: 'L', profiles: emails.map((email) => ({ email })) },
			LIST_AUTH,
		);
		ids.push(added.body.data.listId);
	}
	return (await createCampaign(validCampaign({ recepientList: ids }))).body.data.campaign._id;
}

describe('POST /campaign/send (spec)', () => {
	test('spec: sendCampaign starts sending the campaign to every profile of its lists', async () => {
		const campaignId = await campaignFor([['ann@customer.test', 'bob@customer.test']]);

		const { status, body } = await sendCampaign({ campaignId });

		expect(status).toBe(200);
		expect(body.status).toBe('success');
		expect(sandbox.state.campaignSends).toEqual([
			{
				campaignId,
				recipients: ['ann@customer.test', 'bob@customer.test'],
				sentAt: expect.any(String),
			},
		]);
	});

	test('spec: sendCampaign reads the correctly spelled Authorization header; a wrong or missing key answers 401 with message', async () => {
		const campaignId = await campaignFor([['ann@customer.test']]);
		const attempts = [
			{},
			{ authorization: 'Bearer wrong' },
			{ authorization: DEMO_KEY },
			LIST_AUTH,
		];
		for (const headers of attempts) {
			const { status, body } = await sendCampaign({ campaignId }, headers);
			expect({ headers, status, body }).toEqual({
				headers,
				status: 401,
				body: errorBody('message', 'Invalid API key'),
			});
		}
		expect(sandbox.state.campaignSends).toHaveLength(0);
	});

	test('spec: a missing campaignId answers 400 with error', async () => {
		const { status, body } = await sendCampaign({});
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Field "campaignId" is required'));
	});
});

describe('POST /campaign/send (assumptions where the spec is silent)', () => {
	test('assumption: the answer is 200 with message "Campaign sending started" and data { campaignId, recipientCount }', async () => {
		const campaignId = await campaignFor([['ann@customer.test', 'bob@customer.test']]);
		const { status, body } = await sendCampaign({ campaignId });
		expect(status).toBe(200);
		expect(body).toEqual({
			status: 'success',
			message: 'Campaign sending started',
			data: { campaignId, recipientCount: 2 },
		});
	});

	test("assumption: the send is recorded before the answer, with the recipients' emails and sentAt from the clock", async () => {
		const campaignId = await campaignFor([['ann@customer.test']]);
		sandbox.setOptions({ now: () => new Date('2025-03-01T10:00:00Z') });
		await sendCampaign({ campaignId });
		expect(sandbox.state.campaignSends).toEqual([
			{ campaignId, recipients: ['ann@customer.test'], sentAt: '2025-03-01T10:00:00.000Z' },
		]);
	});

	test("assumption: recipients are the lists' profiles at send time, in list order, each email once", async () => {
		const campaignId = await campaignFor([
			['ann@customer.test', 'bob@customer.test'],
			['BOB@customer.test', 'carl@customer.test'],
		]);
		const [firstListId] = sandbox.state.campaigns.get(campaignId)?.recepientList ?? [];
		await post(
			'/list/addProfiles',
			{ listId: firstListId, profiles: [{ email: 'dora@customer.test' }] },
			LIST_AUTH,
		);

		const { body } = await sendCampaign({ campaignId });

		expect(body.data.recipientCount).toBe(4);
		expect(sandbox.state.campaignSends[0].recipients).toEqual([
			'ann@customer.test',
			'bob@customer.test',
			'dora@customer.test',
			'carl@customer.test',
		]);
	});

	test('assumption: an unknown campaignId answers 404 with error, and nothing is sent', async () => {
		await campaignFor([['ann@customer.test']]);
		for (const campaignId of ['64a55f1230000000000000ff', '']) {
			const { status, body } = await sendCampaign({ campaignId });
			expect({ campaignId, status, body }).toEqual({
				campaignId,
				status: 404,
				body: errorBody('error', 'Campaign not found'),
			});
		}
		expect(sandbox.state.campaignSends).toHaveLength(0);
	});

	test('assumption: a campaign without recipients (no lists, or only empty ones) answers 400, and nothing is sent', async () => {
		const withoutLists = (await createCampaign(validCampaign())).body.data.campaign._id;
		const withEmptyList = await campaignFor([[]]);
		for (const campaignId of [withoutLists, withEmptyList]) {
			const { status, body } = await sendCampaign({ campaignId });
			expect({ campaignId, status, body }).toEqual({
				campaignId,
				status: 400,
				body: errorBody('error', 'Campaign has no recipients'),
			});
		}
		expect(sandbox.state.campaignSends).toHaveLength(0);
	});

	test('assumption: sending twice sends again, and both sends are recorded', async () => {
		const campaignId = await campaignFor([['ann@customer.test']]);
		expect((await sendCampaign({ campaignId })).status).toBe(200);
		expect((await sendCampaign({ campaignId })).status).toBe(200);
		expect(sandbox.state.campaignSends.map((send) => send.campaignId)).toEqual([
			campaignId,
			campaignId,
		]);
	});

	test('assumption: campaign emails do not count against the daily quota and are not in state.emails', async () => {
		sandbox.setOptions({ dailyLimit: 1 });
		const campaignId = await campaignFor([['ann@customer.test', 'bob@customer.test']]);
		expect((await sendCampaign({ campaignId })).status).toBe(200);
		expect(sandbox.state.emails).toHaveLength(0);

		const email = await post(
			'/email/send',
			{ to: 'jane@customer.test', from: 'hello@example.com', subject: 'Hi', text: 'Hello' },
			AUTH,
		);
		expect(email.body.data).toMatchObject({ dailyEmailCount: 1, dailyEmailLimit: 1 });
		sandbox.setOptions({ dailyLimit: 0 });
		expect((await sendCampaign({ campaignId })).status).toBe(200);
	});

	test('assumption: a non-string campaignId answers 400; authentication comes before the body', async () => {
		for (const campaignId of [42, null, { _id: 'x' }]) {
			const { status, body } = await sendCampaign({ campaignId });
			expect({ campaignId, status, body }).toEqual({
				campaignId,
				status: 400,
				body: errorBody('error', 'Field "campaignId" must be a string'),
			});
		}
		expect((await sendCampaign('{oops', {})).status).toBe(401);
		expect((await sendCampaign('{oops')).body).toEqual(
			errorBody('error', 'Request body must be valid JSON'),
		);
		expect((await sendCampaign([])).body).toEqual(
			errorBody('error', 'Request body must be a JSON object'),
		);
	});

	test('sandbox: onResponse gets a summary naming the recipients, also when the answer is dropped', async () => {
		/** @type {import('./server').ResponseLogEntry[]} */
		const entries = [];
		const _id = '64a55f1230000000000000a1';
		const own = await startSandbox({
			lists: [{ listId: 'list_vip', profiles: [{ email: 'vip@customer.test' }] }],
			campaigns: [{ _id, name: 'Seeded', subject: 'Hi', recepientList: ['list_vip'] }],
			onResponse: (entry) => entries.push(entry),
		});
		try {
			await post('/campaign/send', { campaignId: _id }, AUTH, own);
			own.injectFaults({ action: 'drop' });
			await expect(post('/campaign/send', { campaignId: _id }, AUTH, own)).rejects.toThrow();
			await post('/campaign/send', { campaignId: 'nope' }, AUTH, own);

			const summary = `campaign ${_id} sent to 1 recipient: vip@customer.test`;
			expect(entries.map(({ status, summary }) => ({ status, summary }))).toEqual([
				{ status: 200, summary },
				{ status: 'drop', summary },
				{ status: 404, summary: undefined },
			]);
			expect(entries[2]).not.toHaveProperty('summary');
		} finally {
			await own.close();
		}
	});

	test('assumption: a seeded campaign can be sent', async () => {
		const _id = '64a55f1230000000000000a1';
		const custom = await startSandbox({
			lists: [{ listId: 'list_vip', profiles: [{ email: 'vip@customer.test' }] }],
			campaigns: [{ _id, name: 'Seeded', subject: 'Hi', recepientList: ['list_vip'] }],
		});
		try {
			const { body } = await post('/campaign/send', { campaignId: _id }, AUTH, custom);
			expect(body.data).toEqual({ campaignId: _id, recipientCount: 1 });
			expect(custom.state.campaignSends[0].recipients).toEqual(['vip@customer.test']);
		} finally {
			await custom.close();
		}
	});
});

// ---------------------------------------------------------------- options, seeds, reset

describe('sandbox options for these endpoints', () => {
	test('sandbox: campaignListField defaults to the published recepientList and refuses other values', () => {
		expect(sandbox.options.campaignListField).toBe('recepientList');
		// @ts-expect-error deliberately invalid
		expect(() => sandbox.setOptions({ campaignListField: 'recipients' })).toThrow();
		expect(() => sandbox.setOptions({ campaigns: [] })).toThrow(
			'Cannot change campaigns after start',
		);
	});

	test('sandbox: reset() clears campaigns and campaign sends, and restores campaignListField', async () => {
		sandbox.setOptions({ campaignListField: 'either' });
		await sendCampaign({ campaignId: await campaignFor([['ann@customer.test']]) });
		sandbox.reset();
		expect(sandbox.state.campaigns.size).toBe(0);
		expect(sandbox.state.campaignSends).toHaveLength(0);
		expect(sandbox.options.campaignListField).toBe('recepientList');
	});

	test('sandbox: seeded campaigns exist at start and again after reset()', async () => {
		const _id = '64a55f1230000000000000a1';
		const custom = await startSandbox({
			lists: [{ listId: 'list_vip', name: 'VIP' }],
			campaigns: [{ _id, name: 'Seeded', subject: 'Hi', recepientList: ['list_vip'] }],
		});
		try {
			const expected = {
				_id,
				name: 'Seeded',
				subject: 'Hi',
				recepientList: ['list_vip'],
				createdAt: expect.any(String),
			};
			expect(custom.state.campaigns.get(_id)).toEqual(expected);
			custom.state.campaigns.clear();
			custom.reset();
			expect(custom.state.campaigns.get(_id)).toEqual(expected);
		} finally {
			await custom.close();
		}
	});

	test('sandbox: a seeded campaign needs a 24-hex _id and seeded lists', async () => {
		await expect(
			startSandbox({ campaigns: [{ _id: 'camp_1', name: 'X', subject: 'Y' }] }),
		).rejects.toThrow('_id must be 24 lower-case hex characters');
		await expect(
			startSandbox({
				campaigns: [
					{ _id: '64a55f1230000000000000a1', name: 'X', subject: 'Y', recepientList: ['nope'] },
				],
			}),
		).rejects.toThrow(
			'Seeded campaign 64a55f1230000000000000a1 names list nope, which is not seeded',
		);
	});
});

// ---------------------------------------------------------------- faults and error shape

/**
 * A valid request for each path of this file, with what it needs set up first.
 * @type {Record<string, () => Promise<{ body: unknown }>>}
 */
const VALID_REQUESTS = {
	'/list/create': async () => ({ body: validList() }),
	'/campaign/create': async () => ({ body: validCampaign() }),
	'/campaign/send': async () => ({
		body: { campaignId: await campaignFor([['ann@customer.test']]) },
	}),
};
const PATHS = /** @type {import('./schemas').RoutePath[]} */ (Object.keys(VALID_REQUESTS));

/** How much state the valid requests change. */
const stateSize = () =>
	sandbox.state.lists.size + sandbox.state.campaigns.size + sandbox.state.campaignSends.length;

describe('fault injection on these endpoints', () => {
	test('fault: a fault with the path is consumed only by a request to it, answers without touching state, then normal handling resumes', async () => {
		for (const path of PATHS) {
			sandbox.reset();
			const { body } = await VALID_REQUESTS[path]();
			const before = stateSize();
			sandbox.injectFaults({ path, status: 503 });

			expect((await post('/email/unknown', {}, AUTH)).status).toBe(404);
			expect(sandbox.pendingFaults()).toBe(1);
			const faulted = await post(path, body, AUTH);
			expect({ path, status: faulted.status, body: faulted.body }).toEqual({
				path,
				status: 503,
				body: errorBody('message', 'Service Unavailable'),
			});
			expect(stateSize()).toBe(before);
			expect({ path, status: (await post(path, body, AUTH)).status }).toEqual({
				path,
				status: 200,
			});
		}
	});

	test('fault: drop on /campaign/send records the send but answers nothing: the case where a node must not send again', async () => {
		const campaignId = await campaignFor([['ann@customer.test']]);
		sandbox.injectFaults({ path: '/campaign/send', action: 'drop' });
		await expect(sendCampaign({ campaignId })).rejects.toThrow('fetch failed');
		expect(sandbox.state.campaignSends).toEqual([expect.objectContaining({ campaignId })]);
	});

	test('fault: every route path is accepted as a fault path', () => {
		const { ROUTES } = require('./routes');
		for (const route of Object.keys(ROUTES)) {
			const path = /** @type {import('./schemas').RoutePath} */ (route.replace(/^POST /, ''));
			sandbox.injectFaults({ path, status: 500 });
		}
		expect(sandbox.pendingFaults()).toBe(Object.keys(ROUTES).length);
		expect(PATHS).toEqual(['/list/create', '/campaign/create', '/campaign/send']);
	});

	test('fault: reset, drop and faultRate work on these paths', async () => {
		for (const path of PATHS) {
			sandbox.reset();
			const { body } = await VALID_REQUESTS[path]();
			const before = stateSize();

			sandbox.injectFaults({ path, action: 'reset' });
			await expect(post(path, body, AUTH)).rejects.toThrow('fetch failed');
			expect(stateSize()).toBe(before);

			sandbox.setOptions({ faultRate: 1 });
			expect((await post(path, body, AUTH)).body).toEqual(
				errorBody('message', 'Internal server error. Please retry later.'),
			);
			expect(stateSize()).toBe(before);
			sandbox.setOptions({ faultRate: 0 });

			// drop: the request takes effect, but no answer comes back.
			sandbox.injectFaults({ path, action: 'drop' });
			await expect(post(path, body, AUTH)).rejects.toThrow('fetch failed');
			expect({ path, changed: stateSize() > before }).toEqual({ path, changed: true });
		}
	});

	test('sandbox: every error body of these endpoints has status "error" and exactly one text field', async () => {
		const answers = [];
		for (const path of PATHS) {
			answers.push(
				await post(path, {}, {}),
				await post(path, '{x', AUTH),
				await post(path, {}, AUTH),
			);
		}
		answers.push(
			await createList(validList({ profiles: ['prof_missing'] })),
			await createCampaign(validCampaign({ recepientList: ['list_missing'] })),
			await sendCampaign({ campaignId: 'nope' }),
			await sendCampaign({
				campaignId: (await createCampaign(validCampaign())).body.data.campaign._id,
			}),
		);
		for (const { status, body } of answers) {
			expect(status).toBeGreaterThanOrEqual(400);
			expect(body.status).toBe('error');
			expect([
				['error', 'status'],
				['message', 'status'],
			]).toContainEqual(Object.keys(body).sort());
		}
	});
});
