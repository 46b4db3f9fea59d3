// @ts-check
'use strict';

// The sandbox over real HTTP, a row or test per rule, titled by its source: "spec:" the published
// API, "rule N:" ./README.md's assumptions, "sandbox:" / "fault:" / "cli:" the test tooling.

const { spawn } = require('node:child_process');
const path = require('node:path');
const { startSandbox } = require('./server');

const DEMO_KEY = 'be_sandbox_demo_key';
const AUTH = { authorization: `Bearer ${DEMO_KEY}` };
/** The published, misspelled header Add Profiles reads by default (rule 14). */
const LIST_AUTH = { authroization: `Bearer ${DEMO_KEY}` };

const SEND = '/email/send';
const ADD = '/list/addProfiles';
const CREATE_LIST = '/list/create';
const CREATE_CAMPAIGN = '/campaign/create';
const SEND_CAMPAIGN = '/campaign/send';
const PROFILE_ID = /^prof_[0-9a-f]{16}$/;
const LIST_ID = /^list_[0-9a-f]{16}$/;

/** POSTs a body (a string as it is), by default with the demo key where `route` reads it. @param {{ baseUrl: string }} target @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
const request = (target, route, body, headers = route === ADD ? LIST_AUTH : AUTH) =>
	fetch(`${target.baseUrl}${route}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
	});

/** The answer's status and body (parsed when JSON). @param {Parameters<typeof request>} args @returns {Promise<{ status: number, body: any }>} */
async function post(...args) {
	const response = await request(...args);
	const text = await response.text();
	const isJson = response.headers.get('content-type')?.startsWith('application/json');
	return { status: response.status, body: isJson && text ? JSON.parse(text) : undefined };
}

// The spec's error bodies: status 'error' plus one text field, `error`, or `message` (401,
// a route's 404, 500).
const error = (/** @type {string} */ text) => ({ status: 'error', error: text });
const message = (/** @type {string} */ text) => ({ status: 'error', message: text });
const INVALID_KEY = message('Invalid API key');
const INTERNAL_ERROR = message('Internal server error. Please retry later.');
const required = (/** @type {string} */ field) => error(`Field "${field}" is required`);
const notString = (/** @type {string} */ field) => error(`Field "${field}" must be a string`);
const empty = (/** @type {string} */ field) => error(`Field "${field}" must not be empty`);

// Valid bodies, with the fields given changed.
/** @typedef {Record<string, unknown>} Fields @typedef {Partial<import('./server').SandboxOptions>} Options @typedef {import('./server').Fault} Fault */
/** A rejected request; headers: by default the demo key. @typedef {[title: string, route: string, body: unknown, status: number, answer: object, headers?: Record<string, string>, options?: Options]} Rejected */
const mail = (/** @type {Fields} */ fields = {}) => ({
	to: 'jane@customer.test',
	from: 'hello@example.com',
	subject: 'Welcome aboard',
	text: 'Hello Jane',
	...fields,
});
const validList = (/** @type {Fields} */ fields = {}) => ({
	listName: 'Newsletter',
	listDescription: 'Monthly news',
	...fields,
});
const validCampaign = (/** @type {Fields} */ fields = {}) => ({
	name: 'Holiday Sale',
	subject: 'Exclusive 50% Off',
	content: '<p>Happy Holidays!</p>',
	...fields,
});
/** An email with a templateId instead of text (and html, when given). */
const templated = (/** @type {unknown} */ variables, templateId = 'tmpl_welcome', html = '') =>
	mail({ text: undefined, html: html || undefined, templateId, templateVariables: variables });
/** Add Profiles' body for a new list with these emails. */
const newList = (/** @type {string[]} */ emails = [], name = 'X') => ({
	name,
	profiles: emails.map((email) => ({ email })),
});

// The whole state as text, quota counters aside (a 429 starts the day's counter at 0).
/** @param {import('./server').SandboxHandle} target */
const snapshot = (target) =>
	JSON.stringify(target.state, (key, value) =>
		key === 'quota' ? undefined : value instanceof Map ? [...value] : value,
	);

// Every route checks the key before the body (no key and a broken body: 401), then the JSON.
/** @param {string} rule @param {string} name @param {string} route @returns {Rejected[]} */
const keyThenJson = (rule, name, route) => [
	[`${rule}: ${name} checks the key before the body`, route, '{oops', 401, INVALID_KEY, {}],
	[
		`${rule}: ${name}, a body that is not JSON`,
		route,
		'{oops',
		400,
		error('Request body must be valid JSON'),
	],
	[
		`${rule}: ${name}, a JSON body that is not an object`,
		route,
		'[]',
		400,
		error('Request body must be a JSON object'),
	],
];

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {() => boolean} condition */
async function waitFor(condition, timeoutMs = 2000) {
	for (const deadline = Date.now() + timeoutMs; !condition(); await sleep(10)) {
		if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
	}
}

/** @type {import('./server').SandboxHandle} */
let sandbox;

// Seeded, so every test has them (reset() brings them back), with a fixed clock.
const ANN_ID = 'prof_ann';
const ANN_LIST = 'list_ann';
const OTHER_LIST = 'list_other';
const CAMPAIGN = '64a55f1230000000000000a1'; // to ANN_LIST: one recipient
const NO_LISTS = '64a55f1230000000000000a2';
const SEND_IT = { campaignId: CAMPAIGN };
const NOW = '2025-03-01T10:00:00.000Z';

beforeAll(async () => {
	sandbox = await startSandbox({
		now: () => new Date(NOW),
		profiles: [
			{ profileId: ANN_ID, email: 'ann@customer.test' },
			{ profileId: 'prof_bob', email: 'bob@x.test' },
		],
		lists: [
			{ listId: ANN_LIST, name: 'Ann', profiles: [{ email: 'ann@customer.test' }] },
			{ listId: 'list_empty', name: 'Empty' },
			// A profile of ANN_LIST again, in other case, then one of its own:
			{
				listId: OTHER_LIST,
				name: 'Other',
				profiles: [{ email: 'ANN@customer.test' }, { email: 'bob@x.test' }],
			},
		],
		campaigns: [
			{ _id: CAMPAIGN, name: 'Seeded', subject: 'Hi', recepientList: [ANN_LIST] },
			{ _id: NO_LISTS, name: 'No lists', subject: 'Hi' },
		],
	});
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

/** @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
const call = (route, body, headers) => post(sandbox, route, body, headers);

/** @param {string} listId */
const listEntries = (listId) => [...(sandbox.state.lists.get(listId)?.profiles.values() ?? [])];

// ---------------------------------------------------------------- rejected requests

const BAD_TO = error('Invalid email format for field "to"');
const ONE_CONTENT = error('Provide exactly one of html, text or templateId');
const NOT_SCALAR = error('Template variable "company" must be a string, number or boolean');
const LIST_NOT_FOUND = error('List not found');
const NO_NAME = error('name is required when listId is not provided');
const A = { email: 'a@customer.test' };
/** Add Profiles' body with a valid profile and this one at index 1. */
const withProfile1 = (/** @type {unknown} */ profile) => ({ name: 'X', profiles: [A, profile] });
// An invalid date: the route's toISOString() throws.
const brokenClock = { now: () => new Date(Number.NaN) };
const CUSTOM = { apiKeys: ['be_custom'], templates: { tmpl_order: ['orderId'] } };
const CUSTOM_KEY = { authorization: 'Bearer be_custom' };

const listWith = (/** @type {unknown} */ profiles) => validList({ profiles });
const campaignTo = (/** @type {unknown} */ recepientList) => validCampaign({ recepientList });

/** @type {Rejected[]} */
const REJECTED = [
	[
		'spec: Send Email with the key but no "Bearer"',
		SEND,
		mail(),
		401,
		INVALID_KEY,
		{ authorization: DEMO_KEY },
	],
	[
		'spec, rule 14: Send Email with the key in Authroization',
		SEND,
		mail(),
		401,
		INVALID_KEY,
		LIST_AUTH,
	],
	...keyThenJson('spec, rule 1, rule 3', 'Send Email', SEND),
	['rule 3: an empty body', SEND, '', 400, error('Request body must be valid JSON')],
	['spec, rule 5: "to" not an address', SEND, mail({ to: 'not-an-email' }), 400, BAD_TO],
	[
		'rule 5: "to" with a display name',
		SEND,
		mail({ to: 'Jane <jane@customer.test>' }),
		400,
		BAD_TO,
	],
	[
		'rule 5: "from" not an address',
		SEND,
		mail({ from: 'hello' }),
		400,
		error('Invalid email format for field "from"'),
	],
	[
		'spec, rule 12: the daily quota used up',
		SEND,
		mail(),
		429,
		error('Daily email quota exceeded. Please try again tomorrow.'),
		undefined,
		{ dailyLimit: 0 },
	],
	[
		'spec, rule 44: an unexpected failure',
		SEND,
		mail(),
		500,
		INTERNAL_ERROR,
		undefined,
		brokenClock,
	],
	['rule 4: no "to"', SEND, mail({ to: undefined }), 400, required('to')],
	['rule 4: "subject" 42', SEND, mail({ subject: 42 }), 400, notString('subject')],
	['rule 4: an empty subject', SEND, mail({ subject: '' }), 400, empty('subject')],
	[
		'rule 6: an unverified sender',
		SEND,
		mail({ from: 'x@elsewhere.test' }),
		400,
		error('Sender "x@elsewhere.test" is not a verified sender'),
	],
	['rule 7: no content', SEND, mail({ text: undefined }), 400, ONE_CONTENT],
	['rule 7: text and an empty html', SEND, mail({ html: '' }), 400, ONE_CONTENT],
	[
		'rule 8: an unknown templateId',
		SEND,
		templated(undefined, 'tmpl_x'),
		400,
		error('Template "tmpl_x" not found'),
	],
	[
		'rule 9: a variable the template does not have',
		SEND,
		templated({ firstName: 'Jane', plan: 'Pro' }),
		400,
		error('Template variable "plan" does not exist in template "tmpl_welcome"'),
	],
	[
		'rule 10: an object template value',
		SEND,
		templated({ company: { name: 'Acme' } }),
		400,
		NOT_SCALAR,
	],
	[
		'rule 10: templateVariables not an object',
		SEND,
		templated('x'),
		400,
		error('Field "templateVariables" must be an object'),
	],
	[
		'spec, sandbox: an invalid key (custom apiKeys replace the demo key)',
		SEND,
		mail(),
		401,
		INVALID_KEY,
		AUTH,
		CUSTOM,
	],
	[
		'sandbox: custom templates replace tmpl_welcome',
		SEND,
		templated(undefined),
		400,
		error('Template "tmpl_welcome" not found'),
		CUSTOM_KEY,
		CUSTOM,
	],
	[
		'rule 10: templateVariables without templateId',
		SEND,
		mail({ templateVariables: { firstName: 'Jane' } }),
		400,
		error('templateVariables can only be used together with templateId'),
	],

	...keyThenJson('rule 15', 'Add Profiles', ADD),
	[
		'spec, rule 14: Add Profiles with the key in Authorization',
		ADD,
		newList(),
		401,
		INVALID_KEY,
		AUTH,
	],
	[
		'rule 14: listAuthHeader "Authorization", the key in Authroization',
		ADD,
		newList(),
		401,
		INVALID_KEY,
		LIST_AUTH,
		{ listAuthHeader: 'Authorization' },
	],
	[
		'spec, rule 16: profiles not an array',
		ADD,
		{ name: 'X', profiles: A },
		400,
		error('profiles array is required'),
	],
	[
		'rule 17: a profile with a bad email, nothing stored',
		ADD,
		withProfile1({ email: 'not-an-email' }),
		400,
		error('profiles[1].email must be a valid email address'),
	],
	[
		'rule 17: a profile that is a string',
		ADD,
		withProfile1('a@customer.test'),
		400,
		error('profiles[1] must be an object with an email'),
	],
	[
		'rule 17: a non-string firstName',
		ADD,
		withProfile1({ email: 'b@customer.test', firstName: 7 }),
		400,
		error('profiles[1].firstName must be a string'),
	],
	['rule 18: no listId and no name', ADD, { profiles: [A] }, 400, NO_NAME],
	['rule 18: no listId and a blank name', ADD, { name: '   ', profiles: [A] }, 400, NO_NAME],
	['rule 18: listId not a string', ADD, { listId: 7, profiles: [A] }, 400, notString('listId')],
	['rule 19: listId ""', ADD, { listId: '', profiles: [A] }, 404, LIST_NOT_FOUND],

	...keyThenJson('rule 26', 'Create List', CREATE_LIST),
	[
		'rule 26: Create List reads only Authorization, listAuthHeader "either" too',
		CREATE_LIST,
		validList(),
		401,
		INVALID_KEY,
		LIST_AUTH,
		{ listAuthHeader: 'either' },
	],
	[
		"spec, rule 27: Create List does not read Add Profiles' name and description",
		CREATE_LIST,
		{ name: 'Newsletter', description: 'Monthly' },
		400,
		required('listName'),
	],
	[
		'rule 27: no listDescription',
		CREATE_LIST,
		validList({ listDescription: undefined }),
		400,
		required('listDescription'),
	],
	[
		'rule 27: listName ["x"]',
		CREATE_LIST,
		validList({ listName: ['x'] }),
		400,
		notString('listName'),
	],
	[
		'rule 27: a blank listName',
		CREATE_LIST,
		validList({ listName: '   ' }),
		400,
		empty('listName'),
	],
	[
		'rule 28: profiles null',
		CREATE_LIST,
		listWith(null),
		400,
		error('Field "profiles" must be an array of profile IDs'),
	],
	[
		'rule 29: the profile ID ""',
		CREATE_LIST,
		listWith([ANN_ID, '']),
		404,
		error('Profile "" not found'),
	],

	...keyThenJson('rule 32', 'Create Campaign', CREATE_CAMPAIGN),
	[
		'spec, rule 32: Create Campaign with the key in Authroization',
		CREATE_CAMPAIGN,
		validCampaign(),
		401,
		INVALID_KEY,
		LIST_AUTH,
	],
	[
		'rule 34: no subject',
		CREATE_CAMPAIGN,
		validCampaign({ subject: undefined }),
		400,
		required('subject'),
	],
	[
		'rule 34: content 42',
		CREATE_CAMPAIGN,
		validCampaign({ content: 42 }),
		400,
		notString('content'),
	],
	['rule 34: a blank name', CREATE_CAMPAIGN, validCampaign({ name: '  ' }), 400, empty('name')],
	[
		'rule 35: a number among the list IDs',
		CREATE_CAMPAIGN,
		campaignTo([ANN_LIST, 7]),
		400,
		error('recepientList[1] must be a list ID string'),
	],
	[
		'rule 35: the list ID ""',
		CREATE_CAMPAIGN,
		campaignTo([ANN_LIST, '']),
		404,
		error('List "" not found'),
	],
	[
		'rule 33, rule 35: campaignListField "recipientList" names that spelling',
		CREATE_CAMPAIGN,
		validCampaign({ recipientList: 'x' }),
		400,
		error('Field "recipientList" must be an array of list IDs'),
		undefined,
		{ campaignListField: 'recipientList' },
	],

	...keyThenJson('rule 37', 'Send Campaign', SEND_CAMPAIGN),
	[
		'spec, rule 37: Send Campaign with the key in Authroization',
		SEND_CAMPAIGN,
		SEND_IT,
		401,
		INVALID_KEY,
		LIST_AUTH,
	],
	['spec, rule 38: no campaignId', SEND_CAMPAIGN, {}, 400, required('campaignId')],
	['rule 38: campaignId null', SEND_CAMPAIGN, { campaignId: null }, 400, notString('campaignId')],
	[
		'rule 38: an unknown campaignId, nothing sent',
		SEND_CAMPAIGN,
		{ campaignId: '64a55f1230000000000000ff' },
		404,
		error('Campaign not found'),
	],
	[
		'rule 40: a campaign without lists, nothing sent',
		SEND_CAMPAIGN,
		{ campaignId: NO_LISTS },
		400,
		error('Campaign has no recipients'),
	],
];

// Rule 44: the exact error body (status "error" and one text field), and no state changed. (A
// rest parameter: jest takes a function with more parameters than a row has columns for `done`.)
test.each(REJECTED)('rule 44, %s', async (...[, route, body, status, answer, headers, options]) => {
	if (options) sandbox.setOptions(options);
	const before = snapshot(sandbox);
	expect(await call(route, body, headers)).toEqual({ status, body: answer });
	expect(snapshot(sandbox)).toBe(before);
});

// ---------------------------------------------------------------- accepted requests

/** Checks that Create Campaign stored and echoed these list IDs, under recepientList only. @param {string[]} ids */
function readLists(ids) {
	return (/** @type {any} */ { data: { campaign } }) => {
		const stored = sandbox.state.campaigns.get(campaign._id)?.recepientList;
		expect([campaign.recepientList, 'recipientList' in campaign, stored]).toEqual([
			ids,
			false,
			ids,
		]);
	};
}

/** headers: by default the demo key @type {Array<[title: string, route: string, body: unknown, headers?: Record<string, string>, options?: Options, check?: (body: any) => void]>} */
const ACCEPTED = [
	[
		'rule 2: the Bearer scheme in lower case',
		SEND,
		mail(),
		{ authorization: `bearer ${DEMO_KEY}` },
	],
	['rule 6: a verified sender in other case', SEND, mail({ from: 'Hello@Example.com' })],
	[
		'rule 6: any sender with verifiedSenders null',
		SEND,
		mail({ from: 'x@elsewhere.test' }),
		undefined,
		{ verifiedSenders: null },
	],
	['rule 7: html alone', SEND, mail({ text: undefined, html: '<p>Hi</p>' })],
	[
		'rule 7, rule 10: templateId alone, a number value stored as a string',
		SEND,
		templated({ firstName: 'Jane', company: 42 }),
		undefined,
		undefined,
		() =>
			expect(sandbox.state.emails[0].templateVariables).toEqual({
				firstName: 'Jane',
				company: '42',
			}),
	],
	[
		'rule 11: an unknown field, ignored',
		SEND,
		mail({ replyTo: 'x@y.test' }),
		undefined,
		undefined,
		() => expect(sandbox.state.emails[0]).not.toHaveProperty('replyTo'),
	],
	[
		'sandbox: custom apiKeys and templates',
		SEND,
		templated({ orderId: 'A-1' }, 'tmpl_order'),
		CUSTOM_KEY,
		CUSTOM,
	],
	[
		'rule 14: listAuthHeader "either", the key in Authorization',
		ADD,
		newList(),
		AUTH,
		{ listAuthHeader: 'either' },
	],
	[
		'rule 14: listAuthHeader "either", the key in Authroization',
		ADD,
		newList(),
		LIST_AUTH,
		{ listAuthHeader: 'either' },
	],
	[
		'rule 16: an empty profiles array, addedCount 0, and the list is created',
		ADD,
		newList(),
		undefined,
		undefined,
		(body) =>
			expect([body.data.addedCount, sandbox.state.lists.has(body.data.listId)]).toEqual([0, true]),
	],
	[
		'rule 34, rule 35: an empty content and an empty recepientList',
		CREATE_CAMPAIGN,
		validCampaign({ content: '', recepientList: [] }),
	],
	[
		'rule 33: by default recipientList is ignored like any unknown field, a malformed one not even checked',
		CREATE_CAMPAIGN,
		validCampaign({ recipientList: 'oops' }),
		undefined,
		undefined,
		readLists([]),
	],
	[
		'rule 33: campaignListField "recipientList" reads only that spelling',
		CREATE_CAMPAIGN,
		validCampaign({ recipientList: [ANN_LIST], recepientList: [OTHER_LIST] }),
		undefined,
		{ campaignListField: 'recipientList' },
		readLists([ANN_LIST]),
	],
	[
		'rule 33: campaignListField "either" combines both, each list once',
		CREATE_CAMPAIGN,
		validCampaign({
			recepientList: [ANN_LIST, OTHER_LIST],
			recipientList: [OTHER_LIST, 'list_empty'],
		}),
		undefined,
		{ campaignListField: 'either' },
		readLists([ANN_LIST, OTHER_LIST, 'list_empty']),
	],
];

test.each(ACCEPTED)('%s: 200', async (...[, route, body, headers, options, check]) => {
	if (options) sandbox.setOptions(options);
	const answer = await call(route, body, headers);
	expect(answer.status).toBe(200);
	check?.(answer.body);
});

// ---------------------------------------------------------------- accepted requests: the answers

const EVE = { email: 'eve@customer.test', firstName: 'Eve', lastName: 'Lee' };
const HEX_24 = /^[0-9a-f]{24}$/;
const like = (/** @type {RegExp} */ pattern) => expect.stringMatching(pattern);
/** answer: past status 'success'; check: what it stored @type {Array<[title: string, route: string, body: unknown, answer: object, check: (data: any) => void, newId?: (data: any) => string]>} */
const ANSWERS = [
	[
		'spec, rule 13: Send Email queues the email: messageId msg_<uuid>, the count of the day including it, the limit',
		SEND,
		mail(),
		{
			message: 'Email queued successfully',
			data: {
				messageId: like(/^msg_[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/),
				dailyEmailCount: 1,
				dailyEmailLimit: 100,
			},
		},
		(data) =>
			expect(sandbox.state.emails).toEqual([
				expect.objectContaining({ messageId: data.messageId, ...mail() }),
			]),
		(data) => data.messageId,
	],
	[
		'spec, rule 22, rule 24: Add Profiles without listId creates a list_<16 hex> holding them; no profile IDs in the answer',
		ADD,
		{ name: 'Newsletter', description: 'Monthly news', profiles: [EVE, A] },
		{ data: { listId: like(LIST_ID), addedCount: 2 } },
		(data) => {
			expect(sandbox.state.lists.get(data.listId)).toMatchObject({
				name: 'Newsletter',
				description: 'Monthly news',
			});
			expect(listEntries(data.listId)).toEqual(
				[EVE, A].map((profile) => ({ profileId: like(PROFILE_ID), ...profile })),
			);
		},
		(data) => data.listId,
	],
	[
		'spec, rule 27, rule 31: Create List creates an empty list (an empty listDescription, profiles [] and unknown fields allowed); the answer is only data.listId',
		CREATE_LIST,
		validList({ listDescription: '', color: 'blue', profiles: [] }),
		{ data: { listId: like(LIST_ID) } },
		(data) =>
			expect(sandbox.state.lists.get(data.listId)).toEqual({
				listId: data.listId,
				name: 'Newsletter',
				description: '',
				profiles: new Map(),
			}),
		(data) => data.listId,
	],
	[
		'spec, rule 35, rule 36: Create Campaign stores the campaign (a repeated list ID once, unknown fields ignored) and echoes it, with a 24-hex _id and createdAt',
		CREATE_CAMPAIGN,
		validCampaign({ recepientList: [ANN_LIST, 'list_empty', ANN_LIST], extra: 1 }),
		{
			data: {
				campaign: {
					_id: like(HEX_24),
					...validCampaign({ recepientList: [ANN_LIST, 'list_empty'] }),
					createdAt: NOW,
				},
			},
		},
		(data) => expect(sandbox.state.campaigns.get(data.campaign._id)).toEqual(data.campaign),
		(data) => data.campaign._id,
	],
	[
		'rule 34, rule 36: without content and list IDs, a campaign has no content and recepientList []',
		CREATE_CAMPAIGN,
		{ name: 'Holiday Sale', subject: 'Hi' },
		{
			data: {
				campaign: {
					_id: like(HEX_24),
					name: 'Holiday Sale',
					subject: 'Hi',
					recepientList: [],
					createdAt: NOW,
				},
			},
		},
		(data) => expect(sandbox.state.campaigns.get(data.campaign._id)).toEqual(data.campaign),
		(data) => data.campaign._id,
	],
	[
		'spec, rule 39, rule 41: Send Campaign answers 200 "Campaign sending started", the send recorded before the answer',
		SEND_CAMPAIGN,
		SEND_IT,
		{ message: 'Campaign sending started', data: { campaignId: CAMPAIGN, recipientCount: 1 } },
		() =>
			expect(sandbox.state.campaignSends).toEqual([
				{ campaignId: CAMPAIGN, recipients: ['ann@customer.test'], sentAt: NOW },
			]),
	],
];

test.each(ANSWERS)('%s', async (...[, route, body, answer, check, newId]) => {
	const first = await call(route, body);
	expect(first).toEqual({ status: 200, body: { status: 'success', ...answer } });
	check(first.body.data);
	if (newId) expect(newId((await call(route, body)).body.data)).not.toBe(newId(first.body.data));
});

// ---------------------------------------------------------------- Send Email's quota

const OTHER_KEY = { authorization: 'Bearer be_second_key' };
/** count: the dailyEmailCount of a 200 @type {Array<[title: string, options: Options, steps: Array<[overrides: Fields, headers: Record<string, string>, status: number, count?: number]>]>} */
const QUOTA_RUNS = [
	[
		'rule 1, rule 12: only accepted emails count, and validation comes before the quota',
		{ dailyLimit: 1 },
		[
			[{ to: 'bad' }, AUTH, 400],
			[{}, { authorization: 'Bearer wrong' }, 401],
			[{}, AUTH, 200, 1],
			[{ to: 'bad' }, AUTH, 400],
		],
	],
	[
		'spec, rule 12: the quota is counted per API key; each success counts itself; at the limit 429',
		{ apiKeys: [DEMO_KEY, 'be_second_key'], dailyLimit: 2 },
		[
			[{}, AUTH, 200, 1],
			[{}, AUTH, 200, 2],
			[{}, AUTH, 429],
			[{}, OTHER_KEY, 200, 1],
		],
	],
];

test.each(QUOTA_RUNS)('%s; only accepted emails are queued', async (...[, options, steps]) => {
	sandbox.setOptions(options);
	for (const [overrides, headers, status, count] of steps) {
		const data = { dailyEmailCount: count, dailyEmailLimit: options.dailyLimit };
		expect(await call(SEND, mail(overrides), headers)).toMatchObject(
			status === 200 ? { status, body: { data } } : { status },
		);
	}
	expect(sandbox.state.emails).toHaveLength(steps.filter(([, , status]) => status === 200).length);
});

test('rule 12: the quota starts again at 0 on the next UTC day', async () => {
	let clock = new Date('2025-03-01T23:59:00Z');
	sandbox.setOptions({ dailyLimit: 1, now: () => clock });
	const statuses = [(await call(SEND, mail())).status, (await call(SEND, mail())).status];
	clock = new Date('2025-03-02T00:00:01Z');
	expect(statuses).toEqual([200, 429]);
	expect((await call(SEND, mail())).body.data.dailyEmailCount).toBe(1);
});

// ---------------------------------------------------------------- Add Profiles and profile IDs

test('spec, rule 20, rule 21, rule 23, rule 25: with listId Add Profiles adds to that list, ignoring name and description; duplicates (listed or repeated, any case) are neither added nor counted; an email keeps one profileId in the account, as first seen, while each list keeps the fields it was given', async () => {
	const eve = { email: 'eve@customer.test', firstName: 'Eve' };
	const evie = { email: 'Eve@Customer.test', firstName: 'Evie' };
	const profiles = [eve, { ...eve, email: 'EVE@customer.test' }];
	const { listId, addedCount } = (await call(ADD, { name: 'Original', profiles })).body.data;
	const renamed = { listId, name: 'Renamed', description: 'New', profiles: [evie, A] };
	const again = await call(ADD, renamed);
	const other = await call(ADD, { name: 'Other', profiles: [evie] });
	const added = { status: 'success', data: { listId, addedCount: 1 } };
	expect([addedCount, again.body]).toEqual([1, added]);
	// Three seeded lists and two new ones:
	const { name, description } = sandbox.state.lists.get(listId) ?? {};
	expect([name, description, sandbox.state.lists.size]).toEqual(['Original', undefined, 5]);
	const eveId = sandbox.state.profileIdsByEmail.get('eve@customer.test');
	const aEntry = { profileId: like(PROFILE_ID), ...A };
	expect(listEntries(listId)).toEqual([{ profileId: eveId, ...eve }, aEntry]);
	expect(listEntries(other.body.data.listId)).toEqual([{ profileId: eveId, ...evie }]);
	// After the seeded profiles:
	const stored = [...sandbox.state.profiles.values()].slice(2);
	expect(stored).toEqual([{ profileId: eveId, ...eve }, aEntry]);
});

// ---------------------------------------------------------------- routing, recording, options

test('rule 1, sandbox: unknown paths, other methods and paths outside basePath answer 404 with message, before the key is checked; every request is recorded, rejected ones included', async () => {
	const attempts = [
		['POST', `${sandbox.baseUrl}/email/unknown`],
		['GET', `${sandbox.baseUrl}/email/send`],
		['POST', `${sandbox.origin}/email/send`],
	];
	for (const [method, url] of attempts) {
		const response = await fetch(url, { method, body: method === 'GET' ? undefined : '{}' });
		expect([url, response.status, await response.json()]).toEqual([url, 404, message('Not found')]);
	}
	await call(SEND, '{broken', { ...AUTH, 'X-Trace': 'abc' });
	expect(sandbox.state.emails).toHaveLength(0);
	expect(sandbox.requests).toEqual([
		expect.objectContaining({ method: 'POST', path: '/email/unknown', body: {}, answer: 404 }),
		expect.objectContaining({ method: 'GET', path: SEND, answer: 404 }),
		// Outside basePath the recorded path is the full path; `url` shows where the request went.
		expect.objectContaining({ path: '/email/send', url: '/email/send', answer: 404 }),
		expect.objectContaining({
			path: SEND,
			body: undefined,
			receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			headers: expect.objectContaining({ ...AUTH, 'x-trace': 'abc' }),
			answer: 400,
		}),
	]);
});

test('sandbox, rule 24: seeded lists take the profileId of a seeded profile by email; reset() restores options and seeded state, and clears quota, requests and faults', async () => {
	const [seeded, options] = [snapshot(sandbox), sandbox.options];
	expect(listEntries(ANN_LIST)).toEqual([{ profileId: ANN_ID, email: 'ann@customer.test' }]);
	sandbox.setOptions({ dailyLimit: 1, campaignListField: 'either' });
	for (const [route, body] of /** @type {const} */ ([
		[SEND, mail()],
		[ADD, newList(['a@customer.test'])],
		[SEND_CAMPAIGN, SEND_IT],
		[CREATE_CAMPAIGN, validCampaign()],
	])) {
		expect((await call(route, body)).status).toBe(200);
	}
	sandbox.injectFaults({ status: 500 });
	sandbox.reset();
	expect(sandbox.options).toEqual(options);
	expect([snapshot(sandbox), sandbox.requests.length]).toEqual([seeded, 0]);
	expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}/api/v0/dev`);
	// No fault left, and the quota counts from 0 again.
	expect((await call(SEND, mail())).body.data.dailyEmailCount).toBe(1);
});

const ANN = { profileId: ANN_ID, email: 'ann@customer.test' };
const start = (/** @type {any} */ options) => () => startSandbox(options);
// A refused change leaves the running sandbox as it was.
test.each([
	[
		'sandbox: setOptions() refuses an option fixed at start',
		() => sandbox.setOptions({ port: 1234 }),
		'Cannot change port after start',
	],
	[
		'sandbox: setOptions() refuses an invalid value',
		() => sandbox.setOptions(/** @type {any} */ ({ listAuthHeader: 'Auth' })),
		'listAuthHeader',
	],
	[
		'fault: injectFaults() refuses an unknown action',
		// @ts-expect-error deliberately invalid
		() => sandbox.injectFaults({ action: 'explode' }),
		'action',
	],
	[
		'fault: injectFaults() refuses an unknown path',
		() => sandbox.injectFaults({ path: '/email/sned', status: 500 }),
		'path',
	],
	// startSandbox() with seeded state that contradicts itself:
	[
		'rule 24: a profileId seeded twice: startSandbox() refuses it',
		start({ profiles: [ANN, { ...ANN, email: 'b@x.test' }] }),
		'profileId prof_ann is seeded twice',
	],
	[
		'rule 24: an email seeded twice: startSandbox() refuses it',
		start({ profiles: [ANN, { profileId: 'p2', email: 'ANN@customer.test' }] }),
		'email ANN@customer.test is seeded twice',
	],
	[
		'sandbox: a campaign _id not 24 hex: startSandbox() refuses it',
		start({ campaigns: [{ _id: 'camp_1', name: 'X', subject: 'Y' }] }),
		'_id must be 24 lower-case hex characters',
	],
	[
		'sandbox: a campaign naming a list not seeded: startSandbox() refuses it',
		start({ campaigns: [{ _id: CAMPAIGN, name: 'X', subject: 'Y', recepientList: ['nope'] }] }),
		`Seeded campaign ${CAMPAIGN} names list nope, which is not seeded`,
	],
])('%s', async (_title, change, text) => {
	await expect(async () => change()).rejects.toThrow(text);
	expect((await call(SEND, mail())).status).toBe(200);
});

// ---------------------------------------------------------------- faults

// Faults on a Send Email: the answer, or unanswered what the request records; none queues it. A
// drop, which does the request: the campaign test of rules 42 and 43.
/** @type {Array<[title: string, faults: Fault | Fault[], options: Options, answer: 'reset' | [status: number, body: unknown, headers?: Record<string, string>]]>} */
const FAULTS = [
	[
		"fault: a status answers it with the spec's body for it, changing nothing",
		{ status: 500 },
		{},
		[500, INTERNAL_ERROR, { 'content-type': 'application/json; charset=utf-8' }],
	],
	[
		'fault: a fault with a path is taken only by its requests; a status the spec has no body for: its text',
		[
			{ path: ADD, status: 500 },
			{ path: SEND, status: 503 },
		],
		{},
		[503, message('Service Unavailable')],
	],
	[
		'fault: a string body is sent as it is',
		{ status: 502, body: '<html>Bad gateway</html>', headers: { 'Content-Type': 'text/html' } },
		{},
		[502, '<html>Bad gateway</html>', { 'content-type': 'text/html' }],
	],
	[
		'fault: faultRate 1 answers one of randomFaults (default a 500)',
		[],
		{ faultRate: 1 },
		[500, INTERNAL_ERROR],
	],
	['fault: reset ends the connection unanswered, nothing done', { action: 'reset' }, {}, 'reset'],
];

test.each(FAULTS)('%s', async (...[, faults, options, answer]) => {
	sandbox.injectFaults(faults);
	sandbox.setOptions(options);
	if (typeof answer === 'string') {
		await expect(request(sandbox, SEND, mail())).rejects.toThrow('fetch failed');
	} else {
		const [status, body, headers = {}] = answer;
		const response = await request(sandbox, SEND, mail());
		const text = typeof body === 'string' ? body : JSON.stringify(body);
		expect([response.status, await response.text()]).toEqual([status, text]);
		for (const name in headers) expect(response.headers.get(name)).toBe(headers[name]);
	}
	expect(sandbox.state.emails).toHaveLength(0);
	sandbox.setOptions({ faultRate: 0 });
	// Nor did the quota count it.
	expect((await call(SEND, mail())).body.data.dailyEmailCount).toBe(1);
	const recorded = typeof answer === 'string' ? answer : answer[0];
	expect(sandbox.requests.map((request) => request.answer)).toEqual([recorded, 200]);
});

/** @type {Array<[title: string, options: Options, faults: Fault | Fault[]]>} */
const DELAYED = [
	['sandbox: latencyMs delays every answer', { latencyMs: 120 }, []],
	['fault: delay waits delayMs, then handles the request', {}, { action: 'delay', delayMs: 120 }],
];
test.each(DELAYED)('%s', async (_title, options, faults) => {
	sandbox.setOptions(options);
	sandbox.injectFaults(faults);
	const startedAt = Date.now();
	expect((await call(SEND, mail())).status).toBe(200);
	expect(Date.now() - startedAt).toBeGreaterThanOrEqual(100);
});

// Faults that take effect: the email is queued, whatever the answer says.
/** @type {Array<[title: string, fault: Fault, answer: import('./server').Outcome, minMs: number]>} */
const APPLIED = [
	[
		'fault: applied does the request, then answers the status given',
		{ status: 504, applied: true },
		504,
		0,
	],
	[
		'fault: drip does the request, then answers in ten pieces delayMs apart',
		{ action: 'drip', delayMs: 30 },
		'drip',
		260,
	],
];
test.each(APPLIED)('%s', async (_title, fault, answer, minMs) => {
	sandbox.injectFaults(fault);
	const startedAt = Date.now();
	await request(sandbox, SEND, mail()).then((response) => response.text());
	expect(Date.now() - startedAt).toBeGreaterThanOrEqual(minMs);
	expect(sandbox.state.emails).toHaveLength(1);
	expect(sandbox.requests[0].answer).toBe(answer);
});

/** @type {typeof DELAYED} */
const HANGING = [
	['fault: hang never answers, and close() ends the hanging connection', {}, { action: 'hang' }],
	['fault: close() also ends requests waiting on a long latency', { latencyMs: 60_000 }, []],
];
test.each(HANGING)('%s', async (_title, options, faults) => {
	const own = await startSandbox(options);
	own.injectFaults(faults);
	const outcome = post(own, SEND, mail())
		.then(() => 'answered')
		.catch(() => 'failed');
	await waitFor(() => own.requests.length === 1);
	expect(await Promise.race([outcome, sleep(200).then(() => 'pending')])).toBe('pending');
	const closeStartedAt = Date.now();
	await own.close();
	expect(Date.now() - closeStartedAt).toBeLessThan(1000);
	expect(await outcome).toBe('failed');
	expect(own.state.emails).toHaveLength(0);
});

test('fault: randomFaults with a seed draws the same mix every time', async () => {
	const mix = { faultRate: 0.5, faultSeed: 7, randomFaults: [{ status: 500 }, { status: 503 }] };
	const statuses = async () => {
		sandbox.reset();
		sandbox.setOptions(mix);
		const seen = [];
		for (let index = 0; index < 20; index++) seen.push((await call(SEND, mail())).status);
		return seen;
	};
	const first = await statuses();
	expect(await statuses()).toEqual(first);
	expect(new Set(first)).toEqual(new Set([200, 500, 503]));
});

// ---------------------------------------------------------------- CLI

/** Starts the CLI with `args`; `ready()` resolves once the banner is printed. @param {string[]} args */
function spawnCli(args) {
	const child = spawn(process.execPath, [path.join(__dirname, 'cli.js'), '--port', '0', ...args]);
	let output = '';
	child.stdout.on('data', (chunk) => (output += chunk));
	child.stderr.on('data', (chunk) => (output += chunk));
	const exited = new Promise((resolve) => child.on('exit', resolve));
	return {
		exited,
		text: () => output,
		shows: (/** @type {string[]} */ texts) =>
			texts.forEach((text) => expect(output).toContain(text)),
		/** Waits until the output has `count` lines with `line`. */
		logged: (/** @type {string} */ line, count = 1) =>
			waitFor(() => output.split(line).length > count),
		ready: async () => {
			await waitFor(() => output.includes('Press Ctrl+C'), 5000);
			const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] ?? '';
			const target = { baseUrl: baseUrl.replace('localhost', '127.0.0.1') };
			/** @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
			const send = (route, body, headers) => post(target, route, body, headers);
			return { baseUrl, send };
		},
		/** Stops it with `signal`; it must exit with 0. */
		stop: async (/** @type {NodeJS.Signals} */ signal) => {
			child.kill(signal);
			expect(await exited).toBe(0);
		},
	};
}

test('cli: prints base URL, demo key, templates, senders and the campaign list field; logs the recipient and content of a sent email (the links of an HTML one) and new profiles (at most 10), as the onResponse summary says; applies --key, --daily-limit, --list-auth-header, --campaign-list-field and --any-sender; logs method, path and status, never the key; stops on SIGTERM and SIGINT; an invalid --campaign-list-field stops with a readable error', async () => {
	// Three at once: the defaults, every option given, an invalid one.
	const secret = 'be_secret_key_never_printed';
	const cli = spawnCli([]);
	const custom = spawnCli([
		...['--key', secret, '--daily-limit', '1', '--any-sender'],
		...['--list-auth-header', 'either', '--campaign-list-field', 'recipientList'],
	]);
	const invalid = spawnCli(['--campaign-list-field', 'x']);
	expect(await invalid.exited).toBe(1);
	expect(invalid.text()).toContain('Invalid option campaignListField');

	const { baseUrl, send } = await cli.ready();
	expect(baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/v0\/dev$/);
	cli.shows([
		`API key:           ${DEMO_KEY}`,
		'tmpl_welcome (variables: firstName, company)',
		'Verified senders:  hello@example.com, noreply@example.com',
		'Campaign lists:    read from recepientList',
	]);
	const sent = await send(SEND, templated({ firstName: 'Ann' }));
	await send(SEND, mail({ to: 'bob@customer.test' }));
	// Send and Wait for Response: its answers can be clicked from the log.
	const link = (/** @type {string} */ answer) =>
		`http://localhost:5678/webhook-waiting/7/n1?approved=${answer}&amp;signature=ab`;
	const html = `<a href="${link('false')}">No</a><a href="${link('true')}">Yes</a>`;
	await send(SEND, mail({ text: undefined, html }));
	const twelve = newList(Array.from({ length: 12 }, (_, index) => `p${index}@customer.test`));
	await send(ADD, twelve);
	await send(ADD, twelve);
	await cli.logged('POST /list/addProfiles 200', 2);
	for (const line of [
		`/email/send 200 \\d+ms email ${sent.body.data.messageId} to jane@customer\\.test, template tmpl_welcome\n`,
		'/email/send 200 \\d+ms email msg_\\S+ to bob@customer\\.test, plain text\n',
		'/email/send 200 \\d+ms email msg_\\S+ to jane@customer\\.test, HTML, link: \\S+approved=false&signature=ab, link: \\S+approved=true&signature=ab\n',
		'/list/addProfiles 200 \\d+ms new profiles: prof_[0-9a-f]{16} p0@customer\\.test, prof_[0-9a-f]{16} p1@customer\\.test, .*p9@customer\\.test \\(\\+2 more\\)\n',
		// Known emails get no new IDs, so no summary.
		'/list/addProfiles 200 \\d+ms\n',
	]) {
		expect(cli.text()).toMatch(new RegExp(`POST ${line}`));
	}
	await cli.stop('SIGTERM');

	// The banner shows the options in effect; the key given is taken, where Add Profiles reads it too.
	const sendCustom = (await custom.ready()).send;
	custom.shows([
		'API key:           (as given with --key, not shown)',
		'List auth header:  either',
		'Campaign lists:    read from recipientList',
		'Daily limit:       1 emails',
		'Verified senders:  any',
	]);
	const auth = { authorization: `Bearer ${secret}` };
	expect((await sendCustom(ADD, newList(), auth)).status).toBe(200);
	await custom.logged('POST /list/addProfiles 200');
	expect(custom.text()).not.toContain(secret);
	await custom.stop('SIGINT');
});

// ---------------------------------------------------------------- Create List, Create Campaign, Send Campaign

test('spec, rule 30, rule 31: Create List with profile IDs (as Add Profiles made them) puts those profiles in the list, a repeated ID once; a list like any other for Add Profiles', async () => {
	await call(ADD, newList(['cora@customer.test', 'Dan@customer.test'], 'Source'));
	const [coraId, danId] = ['cora@customer.test', 'dan@customer.test'].map((email) =>
		sandbox.state.profileIdsByEmail.get(email),
	);
	const { status, body } = await call(CREATE_LIST, validList({ profiles: [danId, coraId, danId] }));
	expect(status).toBe(200);
	expect(listEntries(body.data.listId)).toEqual([
		{ profileId: danId, email: 'Dan@customer.test' },
		{ profileId: coraId, email: 'cora@customer.test' },
	]);
	const more = { listId: body.data.listId, ...newList(['CORA@customer.test', 'ed@customer.test']) };
	expect((await call(ADD, more)).body.data.addedCount).toBe(1);
});

test("rule 40: Send Campaign sends to the lists' profiles at send time, lists in the campaign's order, profiles in list order, each email once, as first stored", async () => {
	const lists = validCampaign({ recepientList: [ANN_LIST, OTHER_LIST] });
	const { campaign } = (await call(CREATE_CAMPAIGN, lists)).body.data;
	await call(ADD, { listId: ANN_LIST, profiles: [{ email: 'dora@customer.test' }] });
	const { recipientCount } = (await call(SEND_CAMPAIGN, { campaignId: campaign._id })).body.data;
	const recipients = ['ann@customer.test', 'dora@customer.test', 'bob@x.test'];
	expect([recipientCount, sandbox.state.campaignSends]).toEqual([
		3,
		[{ campaignId: campaign._id, recipients, sentAt: NOW }],
	]);
});

test('rule 42, rule 43, sandbox: a campaign is sent again at each request (a dropped one too), the daily quota used up or not, without counting against it or entering state.emails; onResponse names its recipients', async () => {
	/** @type {import('./server').ResponseLogEntry[]} */
	const entries = [];
	sandbox.setOptions({ dailyLimit: 1, onResponse: (entry) => entries.push(entry) });
	await call(SEND_CAMPAIGN, SEND_IT);
	expect((await call(SEND, mail())).body.data.dailyEmailCount).toBe(1);
	expect((await call(SEND, mail())).status).toBe(429);
	expect((await call(SEND_CAMPAIGN, SEND_IT)).status).toBe(200);
	sandbox.injectFaults({ action: 'drop' });
	await expect(call(SEND_CAMPAIGN, SEND_IT)).rejects.toThrow('fetch failed');
	await call(SEND_CAMPAIGN, { campaignId: 'nope' });

	expect(sandbox.state.emails).toHaveLength(1);
	const send = expect.objectContaining({ campaignId: CAMPAIGN, recipients: ['ann@customer.test'] });
	expect(sandbox.state.campaignSends).toEqual([send, send, send]);
	const summary = `campaign ${CAMPAIGN} sent to 1 recipient: ann@customer.test`;
	const logged = entries.filter(({ path }) => path === SEND_CAMPAIGN);
	expect(logged.map(({ status, summary }) => [status, summary])).toEqual([
		[200, summary],
		[200, summary],
		['drop', summary],
		[404, undefined],
	]);
	expect(logged[3]).not.toHaveProperty('summary');
});
