// @ts-check
'use strict';

/**
 * Tests of the further published endpoints (Create List, Create Campaign, Send Campaign: README
 * rules 26 to 43, and 44) over real HTTP, named like ./sandbox.test.js: "spec:" = what those pages
 * publish, "rule N:" = README "Assumptions where the spec is silent", "sandbox:" = test tooling.
 * The faults on these paths are tested with the others in ./sandbox.test.js.
 */

const { startSandbox } = require('./server');
const helpers = require('./test-helpers');
const { LIST_AUTH, post, expectRejected, keyAndJsonRejections, validList, validCampaign } = helpers;
const { error, required, notString, empty, INVALID_KEY } = helpers;

const CREATE_LIST = '/list/create';
const CREATE_CAMPAIGN = '/campaign/create';
const SEND_CAMPAIGN = '/campaign/send';
const CAMPAIGN_ID = /^[0-9a-f]{24}$/;

// Seeded, so every test has them (reset() brings them back).
const ANN_ID = 'prof_ann';
const ANN_LIST = 'list_ann';
const CAMPAIGN = '64a55f1230000000000000a1'; // to ANN_LIST: one recipient
const NO_LISTS = '64a55f1230000000000000a2';
const EMPTY_LISTS = '64a55f1230000000000000a3'; // to a list without profiles
const SEEDED_CAMPAIGN = { _id: CAMPAIGN, name: 'Seeded', subject: 'Hi', recepientList: [ANN_LIST] };

/** @type {import('./server').SandboxHandle} */
let sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({
		profiles: [{ profileId: ANN_ID, email: 'ann@customer.test' }],
		lists: [
			{ listId: ANN_LIST, name: 'Ann', profiles: [{ email: 'ann@customer.test' }] },
			{ listId: 'list_empty', name: 'Empty' },
		],
		campaigns: [
			SEEDED_CAMPAIGN,
			{ _id: NO_LISTS, name: 'No lists', subject: 'Hi' },
			{ _id: EMPTY_LISTS, name: 'Empty list', subject: 'Hi', recepientList: ['list_empty'] },
		],
	});
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

/** @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
const call = (route, body, headers) => post(sandbox, route, body, headers);

/** Creates lists through Create List; their IDs. @param {number} count */
async function newLists(count) {
	const ids = [];
	for (let index = 0; index < count; index++) {
		ids.push((await call(CREATE_LIST, validList({ listName: `List ${index}` }))).body.data.listId);
	}
	return ids;
}

/**
 * A campaign whose lists hold these emails (one list per array), through Add Profiles and Create
 * Campaign.
 * @param {string[][]} lists emails per list
 * @returns {Promise<string>} the campaign's _id
 */
async function campaignFor(lists) {
	const ids = [];
	for (const emails of lists) {
		const profiles = emails.map((email) => ({ email }));
		ids.push((await call('/list/addProfiles', { name: 'L', profiles })).body.data.listId);
	}
	const created = await call(CREATE_CAMPAIGN, validCampaign({ recepientList: ids }));
	return created.body.data.campaign._id;
}

/** @param {string} listId */
const listEmails = (listId) => [...(sandbox.state.lists.get(listId)?.profiles.keys() ?? [])];

// ---------------------------------------------------------------- rejected requests

const NO_RECIPIENTS = error('Campaign has no recipients');
const CAMPAIGN_NOT_FOUND = error('Campaign not found');
const SEND_IT = { campaignId: CAMPAIGN };

/**
 * Rules 28 and 29 (Create List's profile IDs), 35 (Create Campaign's list IDs): the field is not
 * an array of strings (400), or names an unknown ID after the `known` one (404 naming it).
 * `rules`: the rule for each case; `object`: an object where an ID belongs.
 * @returns {import('./test-helpers').Rejection[]}
 */
function idListRejections(
	/** @type {any} */ { rules, route, field, kind, known, object, unknown },
) {
	const [rule, unknownRule] = rules;
	const body = (/** @type {unknown} */ ids) =>
		(route === CREATE_LIST ? validList : validCampaign)({ [field]: ids });
	const notArray = error(`Field "${field}" must be an array of ${kind} IDs`);
	const notString = (/** @type {number} */ index) =>
		error(`${field}[${index}] must be a ${kind} ID string`);
	const noun = kind === 'profile' ? 'Profile' : 'List';
	// prettier-ignore
	return [
		[`${rule}: ${field} a string`, route, body(known), 400, notArray],
		[`${rule}: ${field} null`, route, body(null), 400, notArray],
		[`${rule}: a number among the ${kind} IDs`, route, body([known, 7]), 400, notString(1)],
		[`${rule}: an object among the ${kind} IDs`, route, body([object]), 400, notString(0)],
		...unknown.map((/** @type {string} */ id) => /** @type {import('./test-helpers').Rejection} */ (
			[`${unknownRule}: an unknown ${kind} ID ${JSON.stringify(id)}`, route, body([known, id]), 404,
				error(`${noun} "${id}" not found`)])),
	];
}

/** @type {import('./test-helpers').Rejection[]} */
// prettier-ignore
const REJECTED = [
	...keyAndJsonRejections('rule 26', 'Create List', CREATE_LIST, validList(), [validList()]),
	['rule 26: Create List with the key in Authroization', CREATE_LIST, validList(), 401, INVALID_KEY, LIST_AUTH],
	['rule 26: listAuthHeader "either" does not apply to Create List', CREATE_LIST, validList(), 401, INVALID_KEY,
		LIST_AUTH, { listAuthHeader: 'either' }],
	["spec, rule 27: Create List does not read Add Profiles' name and description", CREATE_LIST,
		{ name: 'Newsletter', description: 'Monthly' }, 400, required('listName')],
	['rule 27: an empty body', CREATE_LIST, {}, 400, required('listName')],
	['rule 27: no listName', CREATE_LIST, validList({ listName: undefined }), 400, required('listName')],
	['rule 27: no listDescription', CREATE_LIST, validList({ listDescription: undefined }), 400,
		required('listDescription')],
	...['listName', 'listDescription'].flatMap((field) => [42, null, ['x']].map((value) => /** @type {const} */ (
		[`rule 27: ${field} ${JSON.stringify(value)}`, CREATE_LIST, validList({ [field]: value }), 400, notString(field)]))),
	['rule 27: an empty listName', CREATE_LIST, validList({ listName: '' }), 400, empty('listName')],
	['rule 27: a blank listName', CREATE_LIST, validList({ listName: '   ' }), 400, empty('listName')],
	...idListRejections({ rules: ['rule 28', 'rule 29'], route: CREATE_LIST, field: 'profiles', kind: 'profile',
		known: ANN_ID, object: { email: 'ann@customer.test' }, unknown: ['prof_missing', '', 'ann@customer.test'] }),

	...keyAndJsonRejections('rule 32', 'Create Campaign', CREATE_CAMPAIGN, validCampaign(), 'text'),
	['spec, rule 32: Create Campaign with the key in Authroization', CREATE_CAMPAIGN, validCampaign(), 401,
		INVALID_KEY, LIST_AUTH],
	['rule 34: an empty body', CREATE_CAMPAIGN, {}, 400, required('name')],
	['rule 34: no name', CREATE_CAMPAIGN, validCampaign({ name: undefined }), 400, required('name')],
	['rule 34: no subject', CREATE_CAMPAIGN, validCampaign({ subject: undefined }), 400, required('subject')],
	...['name', 'subject', 'content'].flatMap((field) => [42, null].map((value) => /** @type {const} */ (
		[`rule 34: ${field} ${value}`, CREATE_CAMPAIGN, validCampaign({ [field]: value }), 400, notString(field)]))),
	['rule 34: an empty name', CREATE_CAMPAIGN, validCampaign({ name: '' }), 400, empty('name')],
	['rule 34: a blank name', CREATE_CAMPAIGN, validCampaign({ name: '  ' }), 400, empty('name')],
	['rule 34: an empty subject', CREATE_CAMPAIGN, validCampaign({ subject: '' }), 400, empty('subject')],
	...idListRejections({ rules: ['rule 35', 'rule 35'], route: CREATE_CAMPAIGN, field: 'recepientList', kind: 'list',
		known: ANN_LIST, object: { listId: ANN_LIST }, unknown: ['list_missing', ''] }),
	['rule 33, rule 35: campaignListField "recipientList" names that spelling', CREATE_CAMPAIGN,
		validCampaign({ recipientList: 'x' }), 400, error('Field "recipientList" must be an array of list IDs'),
		undefined, { campaignListField: 'recipientList' }],

	...keyAndJsonRejections('rule 37', 'Send Campaign', SEND_CAMPAIGN, SEND_IT, []),
	['spec, rule 37: Send Campaign with the key in Authroization', SEND_CAMPAIGN, SEND_IT, 401, INVALID_KEY, LIST_AUTH],
	['spec, rule 38: no campaignId', SEND_CAMPAIGN, {}, 400, required('campaignId')],
	['rule 38: campaignId 42', SEND_CAMPAIGN, { campaignId: 42 }, 400, notString('campaignId')],
	['rule 38: campaignId null', SEND_CAMPAIGN, { campaignId: null }, 400, notString('campaignId')],
	['rule 38: campaignId an object', SEND_CAMPAIGN, { campaignId: { _id: 'x' } }, 400, notString('campaignId')],
	['rule 38: an unknown campaignId, nothing sent', SEND_CAMPAIGN, { campaignId: '64a55f1230000000000000ff' }, 404,
		CAMPAIGN_NOT_FOUND],
	['rule 38: campaignId ""', SEND_CAMPAIGN, { campaignId: '' }, 404, CAMPAIGN_NOT_FOUND],
	['rule 40: a campaign without lists, nothing sent', SEND_CAMPAIGN, { campaignId: NO_LISTS }, 400, NO_RECIPIENTS],
	['rule 40: a campaign with only empty lists', SEND_CAMPAIGN, { campaignId: EMPTY_LISTS }, 400, NO_RECIPIENTS],
];

describe('rule 44: a rejected request gets exactly the error body shown (status "error" and one text field) and changes no state', () => {
	const rejected = expectRejected(() => sandbox);
	test.each(REJECTED)('%s', rejected);
});

// ---------------------------------------------------------------- POST /list/create

test('spec, rule 31: Create List creates an empty list from listName and listDescription; the answer is only data.listId', async () => {
	const answer = await call(CREATE_LIST, validList());
	expect(answer).toEqual({
		status: 200,
		body: { status: 'success', data: { listId: expect.any(String) } },
	});
	const list = sandbox.state.lists.get(answer.body.data.listId);
	expect(list).toMatchObject({ name: 'Newsletter', description: 'Monthly news' });
	expect(list?.profiles.size).toBe(0);
});

test('spec, rule 30: Create List with profile IDs (as Add Profiles made them) puts those profiles in the list', async () => {
	await call('/list/addProfiles', {
		name: 'Source',
		profiles: [{ email: 'cora@customer.test' }, { email: 'Dan@customer.test' }],
	});
	const [coraId, danId] = ['cora@customer.test', 'dan@customer.test'].map((email) =>
		sandbox.state.profileIdsByEmail.get(email),
	);

	const { status, body } = await call(CREATE_LIST, validList({ profiles: [danId, coraId] }));

	expect(status).toBe(200);
	expect([...(sandbox.state.lists.get(body.data.listId)?.profiles.values() ?? [])]).toEqual([
		{ profileId: danId, email: 'Dan@customer.test' },
		{ profileId: coraId, email: 'cora@customer.test' },
	]);
});

test('rule 27: an empty listDescription is accepted; unknown fields are ignored', async () => {
	const { status, body } = await call(
		CREATE_LIST,
		validList({ listDescription: '', color: 'blue' }),
	);
	expect(status).toBe(200);
	expect(sandbox.state.lists.get(body.data.listId)).toMatchObject({ description: '' });
	expect(sandbox.state.lists.get(body.data.listId)).not.toHaveProperty('color');
});

test('rule 30: an empty profiles array creates an empty list, and a repeated ID is added once', async () => {
	const empty = await call(CREATE_LIST, validList({ profiles: [] }));
	const repeated = await call(CREATE_LIST, validList({ profiles: [ANN_ID, ANN_ID] }));
	expect([listEmails(empty.body.data.listId), listEmails(repeated.body.data.listId)]).toEqual([
		[],
		['ann@customer.test'],
	]);
});

test('rule 31: two lists may share a name, each with its own listId (list_<16 hex chars>), a list like any other for Add Profiles', async () => {
	const listsBefore = sandbox.state.lists.size;
	const first = (await call(CREATE_LIST, validList({ profiles: [ANN_ID] }))).body.data.listId;
	const second = (await call(CREATE_LIST, validList())).body.data.listId;
	expect([first, second]).toEqual([
		expect.stringMatching(/^list_[0-9a-f]{16}$/),
		expect.any(String),
	]);
	expect(second).not.toBe(first);
	expect(sandbox.state.lists.size).toBe(listsBefore + 2);
	const profiles = [{ email: 'ANN@customer.test' }, { email: 'bob@customer.test' }];
	const added = await call('/list/addProfiles', { listId: first, profiles });
	expect(added.body).toEqual({ status: 'success', data: { listId: first, addedCount: 1 } });
});

// ---------------------------------------------------------------- POST /campaign/create

test('spec, rule 36: Create Campaign stores the campaign (list IDs in the published recepientList) and echoes it: _id (24 hex, a new one for the same name), name, subject, content, recepientList, createdAt', async () => {
	sandbox.setOptions({ now: () => new Date('2025-03-01T10:00:00Z') });
	const [first, second] = await newLists(2);

	const { status, body } = await call(
		CREATE_CAMPAIGN,
		validCampaign({ recepientList: [first, second], extra: 1 }),
	);

	expect(status).toBe(200);
	expect(body).toEqual({
		status: 'success',
		data: {
			campaign: {
				_id: expect.stringMatching(CAMPAIGN_ID),
				name: 'Holiday Sale',
				subject: 'Exclusive 50% Off',
				content: '<p>Happy Holidays!</p>',
				recepientList: [first, second],
				createdAt: '2025-03-01T10:00:00.000Z',
			},
		},
	});
	expect(sandbox.state.campaigns.get(body.data.campaign._id)).toEqual(body.data.campaign);
	const again = await call(CREATE_CAMPAIGN, validCampaign());
	expect(again.body.data.campaign._id).not.toBe(body.data.campaign._id);
});

test('spec, rule 34, rule 36: content and recepientList are optional (then no content, and recepientList []); an empty content is accepted', async () => {
	const plain = await call(CREATE_CAMPAIGN, { name: 'Plain', subject: 'Hello' });
	expect(plain.status).toBe(200);
	expect(plain.body.data.campaign).not.toHaveProperty('content');
	expect(sandbox.state.campaigns.get(plain.body.data.campaign._id)).toMatchObject({
		name: 'Plain',
		subject: 'Hello',
		recepientList: [],
	});
	expect((await call(CREATE_CAMPAIGN, validCampaign({ content: '' }))).status).toBe(200);
});

test('rule 33: by default the correctly spelled recipientList is ignored like any unknown field, and not checked', async () => {
	const { status, body } = await call(
		CREATE_CAMPAIGN,
		validCampaign({ recipientList: [ANN_LIST] }),
	);
	expect(status).toBe(200);
	expect(body.data.campaign.recepientList).toEqual([]);
	expect(sandbox.state.campaigns.get(body.data.campaign._id)?.recepientList).toEqual([]);
	expect((await call(CREATE_CAMPAIGN, validCampaign({ recipientList: 'oops' }))).status).toBe(200);
});

test('rule 33, rule 36: campaignListField "recipientList" reads only that spelling; stored and echoed as recepientList', async () => {
	sandbox.setOptions({ campaignListField: 'recipientList' });
	const [first, second] = await newLists(2);
	const { body } = await call(
		CREATE_CAMPAIGN,
		validCampaign({ recipientList: [first], recepientList: [second] }),
	);
	expect(sandbox.state.campaigns.get(body.data.campaign._id)?.recepientList).toEqual([first]);
	expect(body.data.campaign).toMatchObject({ recepientList: [first] });
	expect(body.data.campaign).not.toHaveProperty('recipientList');
});

test('rule 33: campaignListField "either" reads both spellings and combines them, each list once', async () => {
	sandbox.setOptions({ campaignListField: 'either' });
	const [first, second, third] = await newLists(3);
	const lists = async (/** @type {object} */ fields) =>
		(await call(CREATE_CAMPAIGN, validCampaign(fields))).body.data.campaign.recepientList;
	expect([
		await lists({ recepientList: [first] }),
		await lists({ recipientList: [second] }),
		await lists({ recepientList: [first, second], recipientList: [second, third] }),
	]).toEqual([[first], [second], [first, second, third]]);
});

test('rule 35: a repeated list ID is kept once, and an empty recepientList is accepted', async () => {
	const repeated = await call(
		CREATE_CAMPAIGN,
		validCampaign({ recepientList: [ANN_LIST, ANN_LIST] }),
	);
	expect(repeated.body.data.campaign.recepientList).toEqual([ANN_LIST]);
	expect((await call(CREATE_CAMPAIGN, validCampaign({ recepientList: [] }))).status).toBe(200);
});

// ---------------------------------------------------------------- POST /campaign/send

test('spec, rule 39, rule 41: Send Campaign sends to every profile of its lists: 200 "Campaign sending started" with campaignId and recipientCount; recorded before the answer, sentAt from the clock', async () => {
	const campaignId = await campaignFor([['ann@customer.test', 'bob@customer.test']]);
	sandbox.setOptions({ now: () => new Date('2025-03-01T10:00:00Z') });

	const answer = await call(SEND_CAMPAIGN, { campaignId });

	expect(answer).toEqual({
		status: 200,
		body: {
			status: 'success',
			message: 'Campaign sending started',
			data: { campaignId, recipientCount: 2 },
		},
	});
	const recipients = ['ann@customer.test', 'bob@customer.test'];
	expect(sandbox.state.campaignSends).toEqual([
		{ campaignId, recipients, sentAt: '2025-03-01T10:00:00.000Z' },
	]);
});

test("rule 40: recipients are the lists' profiles at send time, in list order, each email once", async () => {
	const campaignId = await campaignFor([
		['ann@customer.test', 'bob@customer.test'],
		['BOB@customer.test', 'carl@customer.test'],
	]);
	const [listId] = sandbox.state.campaigns.get(campaignId)?.recepientList ?? [];
	await call('/list/addProfiles', { listId, profiles: [{ email: 'dora@customer.test' }] });

	const { body } = await call(SEND_CAMPAIGN, { campaignId });

	expect(body.data.recipientCount).toBe(4);
	expect(sandbox.state.campaignSends[0].recipients).toEqual([
		'ann@customer.test',
		'bob@customer.test',
		'dora@customer.test',
		'carl@customer.test',
	]);
});

test('rule 42: sending again sends again; a dropped send is recorded too, though unanswered', async () => {
	expect((await call(SEND_CAMPAIGN, SEND_IT)).status).toBe(200);
	expect((await call(SEND_CAMPAIGN, SEND_IT)).status).toBe(200);
	sandbox.injectFaults({ path: SEND_CAMPAIGN, action: 'drop' });
	await expect(call(SEND_CAMPAIGN, SEND_IT)).rejects.toThrow('fetch failed');
	expect(sandbox.state.campaignSends.map((send) => send.campaignId)).toEqual([
		CAMPAIGN,
		CAMPAIGN,
		CAMPAIGN,
	]);
});

test('rule 43: campaign emails do not count against the daily quota and are not in state.emails', async () => {
	sandbox.setOptions({ dailyLimit: 1 });
	const campaignId = await campaignFor([['ann@customer.test', 'bob@customer.test']]);
	expect((await call(SEND_CAMPAIGN, { campaignId })).status).toBe(200);
	expect(sandbox.state.emails).toHaveLength(0);

	const email = {
		to: 'jane@customer.test',
		from: 'hello@example.com',
		subject: 'Hi',
		text: 'Hello',
	};
	expect((await call('/email/send', email)).body.data).toMatchObject({
		dailyEmailCount: 1,
		dailyEmailLimit: 1,
	});
	sandbox.setOptions({ dailyLimit: 0 });
	expect((await call(SEND_CAMPAIGN, { campaignId })).status).toBe(200);
});

test('sandbox: a seeded campaign can be sent, and onResponse gets a summary naming its recipients, also when the answer is dropped', async () => {
	/** @type {import('./server').ResponseLogEntry[]} */
	const entries = [];
	sandbox.setOptions({ onResponse: (entry) => entries.push(entry) });

	expect((await call(SEND_CAMPAIGN, SEND_IT)).body.data).toEqual({
		campaignId: CAMPAIGN,
		recipientCount: 1,
	});
	sandbox.injectFaults({ action: 'drop' });
	await expect(call(SEND_CAMPAIGN, SEND_IT)).rejects.toThrow();
	await call(SEND_CAMPAIGN, { campaignId: 'nope' });

	expect(sandbox.state.campaignSends[0].recipients).toEqual(['ann@customer.test']);
	const summary = `campaign ${CAMPAIGN} sent to 1 recipient: ann@customer.test`;
	expect(entries.map(({ status, summary }) => ({ status, summary }))).toEqual([
		{ status: 200, summary },
		{ status: 'drop', summary },
		{ status: 404, summary: undefined },
	]);
	expect(entries[2]).not.toHaveProperty('summary');
});

test('sandbox: seeded campaigns exist at start and again after reset()', async () => {
	const expected = { ...SEEDED_CAMPAIGN, createdAt: expect.any(String) };
	expect(sandbox.state.campaigns.get(CAMPAIGN)).toEqual(expected);
	sandbox.state.campaigns.clear();
	sandbox.reset();
	expect(sandbox.state.campaigns.get(CAMPAIGN)).toEqual(expected);
});
