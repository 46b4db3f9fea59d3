// @ts-check
'use strict';

/**
 * Tests of the sandbox over real HTTP: Send Email, Add Profiles and profile IDs (README rules 1
 * to 25, and 44), then the tooling (recording, options, seeds, faults, CLI). Titles say where a
 * rule comes from: "spec:" = the published API contract, "rule N:" = README "Assumptions where
 * the spec is silent", "sandbox:" / "fault:" / "cli:" = test tooling. ./campaigns.test.js does
 * the same for Create List, Create Campaign and Send Campaign.
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { startSandbox } = require('./server');
const { ROUTES } = require('./routes');
const helpers = require('./test-helpers');
const { DEMO_KEY, AUTH, LIST_AUTH, request, post, snapshot, expectRejected } = helpers;
const { keyAndJsonRejections, error, message, required, notString, empty } = helpers;
const { INVALID_KEY, INVALID_JSON, INTERNAL_ERROR, validList, validCampaign } = helpers;
const { validEmail: mail, sleep, waitFor } = helpers;

const SEND = '/email/send';
const ADD = '/list/addProfiles';
const PROFILE_ID = /^prof_[0-9a-f]{16}$/;
const LIST_ID = /^list_[0-9a-f]{16}$/;
const MESSAGE_ID = /^msg_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** @type {import('./server').SandboxHandle} */
let sandbox;

beforeAll(async () => {
	sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

/** @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
const call = (route, body, headers) => post(sandbox, route, body, headers);

/** An email with a templateId (tmpl_welcome unless given) instead of text (html, when given, too). */
const templated = (
	/** @type {unknown} */ templateVariables,
	templateId = 'tmpl_welcome',
	/** @type {string=} */ html = undefined,
) => mail({ text: undefined, html, templateId, templateVariables });

/** Add Profiles' body for a new list with these emails. */
const newList = (/** @type {string[]} */ emails = [], name = 'X') => ({
	name,
	profiles: emails.map((email) => ({ email })),
});

/**
 * Runs `use` with a sandbox of its own, started with `options`, then closes it.
 * @param {import('./server').SandboxOptions} options
 * @param {(own: import('./server').SandboxHandle) => Promise<void>} use
 */
async function withSandbox(options, use) {
	const own = await startSandbox(options);
	try {
		await use(own);
	} finally {
		await own.close();
	}
}

/** @param {string} listId */
const listEntries = (listId) => [...(sandbox.state.lists.get(listId)?.profiles.values() ?? [])];

// ---------------------------------------------------------------- rejected requests

const BAD_TO = error('Invalid email format for field "to"');
const ONE_CONTENT = error('Provide exactly one of html, text or templateId');
const NOT_SCALAR = error('Template variable "company" must be a string, number or boolean');
const NO_PROFILES = error('profiles array is required');
const NO_NAME = error('name is required when listId is not provided');
const BAD_EMAIL = error('profiles[1].email must be a valid email address');
const LIST_NOT_FOUND = error('List not found');
const NO_KEY = {};
const A = { email: 'a@customer.test' };
/** Add Profiles' body with a valid profile and this one at index 1. */
const withProfile1 = (/** @type {unknown} */ profile) => ({ name: 'X', profiles: [A, profile] });
const brokenClock = {
	now: () => {
		throw new Error('clock broke');
	},
};
const HTML = '<p>Hi</p>';

/** @type {import('./test-helpers').Rejection[]} */
// prettier-ignore
const REJECTED = [
	...keyAndJsonRejections('rule 1, rule 3', 'Send Email', SEND, mail(), [mail()]),
	['spec: send with the key in Authroization', SEND, mail(), 401, INVALID_KEY, LIST_AUTH],
	['spec, rule 5: "to" not an address', SEND, mail({ to: 'not-an-email' }), 400, BAD_TO],
	['spec, rule 5: "to" without a domain', SEND, mail({ to: 'jane@' }), 400, BAD_TO],
	['spec, rule 5: "to" empty', SEND, mail({ to: '' }), 400, BAD_TO],
	['spec, rule 5: "to" with a display name', SEND, mail({ to: 'Jane <jane@customer.test>' }), 400, BAD_TO],
	['spec, rule 12: the daily quota used up', SEND, mail(), 429,
		error('Daily email quota exceeded. Please try again tomorrow.'), undefined, { dailyLimit: 0 }],
	['spec, rule 44: an unexpected failure', SEND, mail(), 500, INTERNAL_ERROR, undefined, brokenClock],
	['rule 1: a path no route serves, without a key', '/nowhere', {}, 404, message('Not found'), NO_KEY],
	['rule 3: an empty body', SEND, '', 400, INVALID_JSON],
	['rule 4: no "to"', SEND, mail({ to: undefined }), 400, required('to')],
	['rule 4: no "from"', SEND, mail({ from: undefined }), 400, required('from')],
	['rule 4: no "subject"', SEND, mail({ subject: undefined }), 400, required('subject')],
	...['to', 'from', 'subject', 'html', 'text', 'templateId'].map((field) => /** @type {const} */ (
		[`rule 4: "${field}" 42`, SEND, mail({ text: undefined, [field]: 42 }), 400, notString(field)])),
	['rule 4: "text" null', SEND, mail({ text: null }), 400, notString('text')],
	['rule 4: an empty subject', SEND, mail({ subject: '' }), 400, empty('subject')],
	['rule 5: "from" not an address', SEND, mail({ from: 'hello' }), 400,
		error('Invalid email format for field "from"')],
	['rule 6: an unverified sender', SEND, mail({ from: 'x@elsewhere.test' }), 400,
		error('Sender "x@elsewhere.test" is not a verified sender')],
	['rule 7: no content', SEND, mail({ text: undefined }), 400, ONE_CONTENT],
	['rule 7: text and html', SEND, mail({ html: HTML }), 400, ONE_CONTENT],
	['rule 7: text and templateId', SEND, mail({ templateId: 'tmpl_welcome' }), 400, ONE_CONTENT],
	['rule 7: html and templateId', SEND, templated(undefined, 'tmpl_welcome', HTML), 400, ONE_CONTENT],
	['rule 7: text and an empty html', SEND, mail({ html: '' }), 400, ONE_CONTENT],
	['rule 8: an unknown templateId', SEND, templated(undefined, 'tmpl_x'), 400, error('Template "tmpl_x" not found')],
	['rule 9: a variable the template does not have', SEND, templated({ firstName: 'Jane', plan: 'Pro' }), 400,
		error('Template variable "plan" does not exist in template "tmpl_welcome"')],
	['rule 10: an object template value', SEND, templated({ company: { name: 'Acme' } }), 400, NOT_SCALAR],
	['rule 10: an array template value', SEND, templated({ company: ['Acme'] }), 400, NOT_SCALAR],
	['rule 10: a null template value', SEND, templated({ company: null }), 400, NOT_SCALAR],
	['rule 10: templateVariables not an object', SEND, templated('x'), 400,
		error('Field "templateVariables" must be an object')],
	['rule 10: templateVariables without templateId', SEND, mail({ templateVariables: { firstName: 'Jane' } }), 400,
		error('templateVariables can only be used together with templateId')],

	...keyAndJsonRejections('rule 15', 'Add Profiles', ADD, newList(), []),
	['spec, rule 14: Add Profiles with the key in Authorization', ADD, newList([A.email]), 401, INVALID_KEY, AUTH],
	['spec: Add Profiles without profiles', ADD, { name: 'X' }, 400, NO_PROFILES],
	['rule 14: listAuthHeader "Authorization", the key in Authroization', ADD, newList(), 401, INVALID_KEY,
		LIST_AUTH, { listAuthHeader: 'Authorization' }],
	['rule 14: listAuthHeader "either", no key', ADD, newList(), 401, INVALID_KEY, NO_KEY, { listAuthHeader: 'either' }],
	['rule 16: profiles not an array', ADD, { name: 'X', profiles: A }, 400, NO_PROFILES],
	['rule 17: a profile without email, nothing stored', ADD, withProfile1({ firstName: 'No email' }), 400, BAD_EMAIL],
	['rule 17: a profile with a bad email, nothing stored', ADD, withProfile1({ email: 'not-an-email' }), 400, BAD_EMAIL],
	['rule 17: a profile that is a string', ADD, withProfile1('a@customer.test'), 400,
		error('profiles[1] must be an object with an email')],
	['rule 17: a non-string firstName', ADD, withProfile1({ email: 'b@customer.test', firstName: 7 }), 400,
		error('profiles[1].firstName must be a string')],
	['rule 18: no listId and no name', ADD, { profiles: [A] }, 400, NO_NAME],
	['rule 18: no listId and an empty name', ADD, { name: '', profiles: [A] }, 400, NO_NAME],
	['rule 18: no listId and a blank name', ADD, { name: '   ', profiles: [A] }, 400, NO_NAME],
	['rule 18: listId not a string', ADD, { listId: 7, profiles: [A] }, 400, notString('listId')],
	['rule 19: an unknown listId', ADD, { listId: 'list_does_not_exist', profiles: [A] }, 404, LIST_NOT_FOUND],
	['rule 19: listId ""', ADD, { listId: '', profiles: [A] }, 404, LIST_NOT_FOUND],
];

describe('rule 44: a rejected request gets exactly the error body shown (status "error" and one text field) and changes no state', () => {
	const rejected = expectRejected(() => sandbox);
	test.each(REJECTED)('%s', rejected);
});

// ---------------------------------------------------------------- accepted requests

/**
 * [title, route, body, headers (default: the demo key), options, check of the answer's body]
 * @type {[string, string, unknown, Record<string, string>?, import('./server').SandboxOptions?, ((body: any) => void)?][]}
 */
// prettier-ignore
const ACCEPTED = [
	['rule 2: the Bearer scheme in lower case', SEND, mail(), { authorization: `bearer ${DEMO_KEY}` }],
	['rule 6: a verified sender in other case', SEND, mail({ from: 'Hello@Example.com' })],
	['rule 6: any sender with verifiedSenders null', SEND, mail({ from: 'x@elsewhere.test' }), undefined,
		{ verifiedSenders: null }],
	['rule 7: html alone', SEND, mail({ text: undefined, html: HTML })],
	['rule 7: text alone', SEND, mail({ text: 'Hi' })],
	['rule 7: templateId alone', SEND, templated(undefined)],
	['rule 10: a number template value, stored as a string', SEND, templated({ firstName: 'Jane', company: 42 }),
		undefined, undefined,
		() => expect(sandbox.state.emails[0].templateVariables).toEqual({ firstName: 'Jane', company: '42' })],
	['rule 11: an unknown field, ignored', SEND, mail({ replyTo: 'x@y.test' }), undefined, undefined,
		() => expect(sandbox.state.emails[0]).not.toHaveProperty('replyTo')],
	['rule 14: listAuthHeader "Authorization", the key in Authorization', ADD, newList(), AUTH,
		{ listAuthHeader: 'Authorization' }],
	['rule 14: listAuthHeader "either", the key in Authorization', ADD, newList(), AUTH, { listAuthHeader: 'either' }],
	['rule 14: listAuthHeader "either", the key in Authroization', ADD, newList(), LIST_AUTH,
		{ listAuthHeader: 'either' }],
	['rule 16: an empty profiles array, addedCount 0, and the list is created', ADD, newList(), undefined, undefined,
		(body) => expect([body.data.addedCount, sandbox.state.lists.has(body.data.listId)]).toEqual([0, true])],
];

test.each(ACCEPTED)('%s: 200', async (...[, route, body, headers, options, check]) => {
	if (options) sandbox.setOptions(options);
	const answer = await call(route, body, headers);
	expect(answer.status).toBe(200);
	check?.(answer.body);
});

// ---------------------------------------------------------------- Send Email

test('spec, rule 13: a valid email is queued: 200 with message, messageId (msg_<uuid>, new per email), count and limit', async () => {
	const first = await call(SEND, mail());
	const second = await call(SEND, mail());

	expect(first).toEqual({
		status: 200,
		body: {
			status: 'success',
			message: 'Email queued successfully',
			data: {
				messageId: expect.stringMatching(MESSAGE_ID),
				dailyEmailCount: 1,
				dailyEmailLimit: 100,
			},
		},
	});
	const [firstId, secondId] = [first.body.data.messageId, second.body.data.messageId];
	expect(secondId).not.toBe(firstId);
	expect(sandbox.state.emails).toEqual([
		expect.objectContaining({
			messageId: firstId,
			to: 'jane@customer.test',
			subject: 'Welcome aboard',
		}),
		expect.objectContaining({ messageId: secondId }),
	]);
});

const OTHER_KEY = { authorization: 'Bearer be_second_key' };
const WRONG_KEY = { authorization: 'Bearer wrong' };
// [title, options, steps: [email overrides, headers, status, dailyEmailCount of a 200]]
/** @type {[string, import('./server').SandboxOptions & { dailyLimit: number }, [object, object, number, number?][]][]} */
// prettier-ignore
const QUOTA_RUNS = [
	['spec, rule 12: each success carries count and limit; at the limit 429', { dailyLimit: 2 },
		[[{}, AUTH, 200, 1], [{}, AUTH, 200, 2], [{}, AUTH, 429]]],
	['rule 12: only accepted emails count', { dailyLimit: 1 },
		[[{ to: 'bad' }, AUTH, 400], [{ from: 'x@elsewhere.test' }, AUTH, 400], [{}, WRONG_KEY, 401], [{}, AUTH, 200, 1]]],
	['rule 1, rule 12: validation before the quota: at the limit an invalid email answers 400', { dailyLimit: 0 },
		[[{ to: 'bad' }, AUTH, 400], [{}, AUTH, 429]]],
	['rule 12: the quota is counted per API key', { apiKeys: [DEMO_KEY, 'be_second_key'], dailyLimit: 1 },
		[[{}, AUTH, 200, 1], [{}, AUTH, 429], [{}, OTHER_KEY, 200, 1]]],
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
	const nextDay = await call(SEND, mail());
	expect(statuses).toEqual([200, 429]);
	expect(nextDay).toMatchObject({ status: 200, body: { data: { dailyEmailCount: 1 } } });
});

// ---------------------------------------------------------------- Add Profiles and profile IDs

test('spec, rule 24: Add Profiles reads the published Authroization; without listId it creates a list; the answer has no profile IDs', async () => {
	const answer = await call(ADD, {
		name: 'Newsletter',
		description: 'Monthly news',
		profiles: [
			{ email: 'ann@customer.test', firstName: 'Ann', lastName: 'Lee' },
			{ email: 'bob@customer.test' },
		],
	});

	expect(answer).toEqual({
		status: 200,
		body: { status: 'success', data: { listId: expect.any(String), addedCount: 2 } },
	});
	const { listId } = answer.body.data;
	expect(sandbox.state.lists.get(listId)).toMatchObject({
		listId,
		name: 'Newsletter',
		description: 'Monthly news',
	});
	expect(listEntries(listId)).toEqual([
		{
			profileId: expect.stringMatching(PROFILE_ID),
			email: 'ann@customer.test',
			firstName: 'Ann',
			lastName: 'Lee',
		},
		{ profileId: expect.stringMatching(PROFILE_ID), email: 'bob@customer.test' },
	]);
});

test('spec, rule 20: Add Profiles with listId adds to that list; name and description are then ignored', async () => {
	const listId = (await call(ADD, newList(['ann@customer.test'], 'Original'))).body.data.listId;
	const profiles = [{ email: 'bob@customer.test' }];
	const answer = await call(ADD, { listId, name: 'Renamed', description: 'New', profiles });
	expect(answer).toEqual({
		status: 200,
		body: { status: 'success', data: { listId, addedCount: 1 } },
	});
	expect(sandbox.state.lists.size).toBe(1);
	const list = sandbox.state.lists.get(listId);
	expect(list).toMatchObject({ name: 'Original', description: undefined });
	expect([...(list?.profiles.keys() ?? [])]).toEqual(['ann@customer.test', 'bob@customer.test']);
});

test('rule 21: duplicate emails (already listed or repeated, any case) are not added or counted; the first is kept', async () => {
	const created = await call(ADD, {
		name: 'X',
		profiles: [
			{ email: 'ann@customer.test', firstName: 'Ann' },
			{ email: 'ANN@customer.test', firstName: 'Other' },
		],
	});
	const { listId } = created.body.data;
	const again = await call(ADD, {
		listId,
		profiles: [{ email: 'Ann@Customer.test' }, { email: 'bob@customer.test' }],
	});

	expect([created.body.data.addedCount, again.body.data.addedCount]).toEqual([1, 1]);
	expect(listEntries(listId)).toEqual([
		{ profileId: expect.any(String), email: 'ann@customer.test', firstName: 'Ann' },
		{ profileId: expect.any(String), email: 'bob@customer.test' },
	]);
});

test('rule 22: each new list gets its own listId, list_<16 hex chars>', async () => {
	const first = (await call(ADD, newList([], 'A'))).body.data.listId;
	const second = (await call(ADD, newList([], 'A'))).body.data.listId;
	expect([first, second]).toEqual([expect.stringMatching(LIST_ID), expect.stringMatching(LIST_ID)]);
	expect(second).not.toBe(first);
});

test('rule 23, rule 25: an email gets one profileId in the account, kept as first seen; each list keeps the fields it was given', async () => {
	const first = await call(ADD, {
		name: 'A',
		profiles: [{ email: 'ann@customer.test', firstName: 'Ann' }],
	});
	const second = await call(ADD, {
		name: 'B',
		profiles: [{ email: 'ANN@customer.test', firstName: 'Annie' }, { email: 'bob@customer.test' }],
	});

	const entry = (/** @type {any} */ answer) =>
		sandbox.state.lists.get(answer.body.data.listId)?.profiles.get('ann@customer.test');
	const annId = entry(first)?.profileId;
	expect(annId).toMatch(PROFILE_ID);
	expect(entry(second)).toEqual({
		profileId: annId,
		email: 'ANN@customer.test',
		firstName: 'Annie',
	});
	expect([...sandbox.state.profiles.values()]).toEqual([
		{ profileId: annId, email: 'ann@customer.test', firstName: 'Ann' },
		{ profileId: expect.stringMatching(PROFILE_ID), email: 'bob@customer.test' },
	]);
	expect(sandbox.state.profileIdsByEmail.get('ann@customer.test')).toBe(annId);
});

// ---------------------------------------------------------------- routing, recording, options

test('rule 1: unknown paths, other methods and paths outside basePath answer 404 with message', async () => {
	const attempts = [
		['POST', `${sandbox.baseUrl}/email/unknown`],
		['GET', `${sandbox.baseUrl}/email/send`],
		['POST', `${sandbox.origin}/email/send`],
	];
	for (const [method, url] of attempts) {
		const response = await fetch(url, {
			method,
			headers: AUTH,
			body: method === 'GET' ? undefined : '{}',
		});
		expect({ url, status: response.status, body: await response.json() }).toEqual({
			url,
			status: 404,
			body: message('Not found'),
		});
	}
	// Outside basePath the recorded path is the full path; `url` shows where the request went.
	expect(sandbox.requests.at(-1)).toMatchObject({ path: '/email/send', url: '/email/send' });
});

test('sandbox: every request is recorded, rejected ones included', async () => {
	await call(SEND, mail(), { authorization: 'Bearer wrong', 'X-Trace': 'abc' });
	await call(SEND, '{broken');
	await call(ADD, newList());

	expect(sandbox.requests).toHaveLength(3);
	const [rejected, broken, listCall] = sandbox.requests;
	expect(rejected).toMatchObject({
		method: 'POST',
		path: SEND,
		body: mail(),
		rawBody: JSON.stringify(mail()),
		receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
		headers: {
			authorization: 'Bearer wrong',
			'x-trace': 'abc',
			'content-type': 'application/json',
		},
	});
	expect(broken).toMatchObject({ body: undefined, rawBody: '{broken' });
	expect(listCall).toMatchObject({ path: ADD, headers: LIST_AUTH });
});

/** A valid request per route, with what it needs created first. */
const VALID = {
	[SEND]: async () => mail(),
	[ADD]: async () => newList(['a@customer.test']),
	'/list/create': async () => validList(),
	'/campaign/create': async () => validCampaign(),
	'/campaign/send': async () => {
		const { listId } = (await call(ADD, newList(['a@customer.test']))).body.data;
		const created = await call('/campaign/create', validCampaign({ recepientList: [listId] }));
		return { campaignId: created.body.data.campaign._id };
	},
};

test('sandbox: the options are the documented defaults; reset() restores them and clears state, quota, requests and faults', async () => {
	sandbox.setOptions({ dailyLimit: 1, campaignListField: 'either' });
	await call(SEND, mail());
	expect((await call('/campaign/send', await VALID['/campaign/send']())).status).toBe(200);
	sandbox.injectFaults({ status: 500 });

	sandbox.reset();

	expect(sandbox.options).toMatchObject({
		host: '127.0.0.1',
		basePath: '/api/v0/dev',
		apiKeys: [DEMO_KEY],
		dailyLimit: 100,
		templates: { tmpl_welcome: ['firstName', 'company'] },
		verifiedSenders: ['hello@example.com', 'noreply@example.com'],
		listAuthHeader: 'Authroization',
		campaignListField: 'recepientList',
		latencyMs: 0,
	});
	expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}/api/v0/dev`);
	expect(sandbox.origin).toBe(`http://127.0.0.1:${sandbox.port}`);
	const { emails, profiles, profileIdsByEmail, lists, campaigns, campaignSends } = sandbox.state;
	const sizes = [emails.length, profiles.size, profileIdsByEmail.size, lists.size, campaigns.size];
	const rest = [campaignSends.length, sandbox.requests.length, sandbox.pendingFaults()];
	expect([...sizes, ...rest]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
	expect((await call(SEND, mail())).body.data.dailyEmailCount).toBe(1);
});

test.each([
	['port (fixed at start)', { port: 1234 }, 'Cannot change port after start'],
	['profiles (fixed at start)', { profiles: [] }, 'Cannot change profiles after start'],
	['campaigns (fixed at start)', { campaigns: [] }, 'Cannot change campaigns after start'],
	['an invalid listAuthHeader', { listAuthHeader: 'Auth' }, undefined],
	['an invalid campaignListField', { campaignListField: 'recipients' }, undefined],
	['a negative dailyLimit', { dailyLimit: -1 }, undefined],
])('sandbox: setOptions() refuses %s', (_title, partial, text) => {
	expect(() => sandbox.setOptions(/** @type {any} */ (partial))).toThrow(text);
});

const ANN = { profileId: 'prof_ann', email: 'ann@customer.test' };
const CAMPAIGN_ID = '64a55f1230000000000000a1';
// prettier-ignore
test.each([
	['rule 24: a profileId seeded twice', { profiles: [ANN, { ...ANN, email: 'b@x.test' }] },
		'profileId prof_ann is seeded twice'],
	['rule 24: an email seeded twice', { profiles: [ANN, { profileId: 'p2', email: 'ANN@customer.test' }] },
		'email ANN@customer.test is seeded twice'],
	['sandbox: a campaign _id not 24 hex', { campaigns: [{ _id: 'camp_1', name: 'X', subject: 'Y' }] },
		'_id must be 24 lower-case hex characters'],
	['sandbox: a campaign naming a list not seeded',
		{ campaigns: [{ _id: CAMPAIGN_ID, name: 'X', subject: 'Y', recepientList: ['nope'] }] },
		`Seeded campaign ${CAMPAIGN_ID} names list nope, which is not seeded`],
])('%s: startSandbox() refuses it', async (_title, options, text) => {
	await expect(startSandbox(options)).rejects.toThrow(text);
});

test('sandbox, rule 24: custom keys, templates and seeds: seeded profiles keep their profileId, seeded lists take it by email; all back after reset()', async () => {
	const ann = { profileId: 'prof_ann', email: 'Ann@customer.test', firstName: 'Ann' };
	const emails = ['ann@customer.test', 'bob@customer.test'];
	const lists = [{ listId: 'list_seeded', ...newList(emails, 'Seeded') }];
	const options = {
		apiKeys: ['be_custom'],
		templates: { tmpl_order: ['orderId'] },
		profiles: [ann],
		lists,
	};
	await withSandbox(options, async (own) => {
		const seeded = () => {
			const list = own.state.lists.get('list_seeded')?.profiles;
			expect([...(list?.keys() ?? [])]).toEqual(emails);
			expect(emails.map((email) => list?.get(email)?.profileId)).toEqual([
				'prof_ann',
				expect.stringMatching(PROFILE_ID),
			]);
			expect([...own.state.profiles.values()]).toEqual([
				ann,
				expect.objectContaining({ email: emails[1] }),
			]);
		};
		seeded();
		const order = mail({
			text: undefined,
			templateId: 'tmpl_order',
			templateVariables: { orderId: 'A-1' },
		});
		expect((await post(own, SEND, order, { authorization: 'Bearer be_custom' })).status).toBe(200);
		expect((await post(own, SEND, mail())).status).toBe(401);
		const add = { listId: 'list_seeded', ...newList(['ann@customer.test', 'new@customer.test']) };
		expect((await post(own, ADD, add, { authroization: 'Bearer be_custom' })).body).toEqual({
			status: 'success',
			data: { listId: 'list_seeded', addedCount: 1 },
		});

		own.reset();
		seeded();
	});
});

// ---------------------------------------------------------------- faults

const ROUTE_PATHS = Object.keys(ROUTES).map((route) => route.replace(/^POST /, ''));

test.each(ROUTE_PATHS)(
	'fault: on %s, faults with that path are taken only by its requests; status, reset and faultRate faults change nothing; drop takes effect unanswered',
	async (route) => {
		const body = await VALID[/** @type {keyof typeof VALID} */ (route)]();
		const before = snapshot(sandbox);
		const seen = sandbox.requests.length;
		sandbox.injectFaults([
			{ path: /** @type {any} */ (route), status: 503 },
			{ path: /** @type {any} */ (route), action: 'reset' },
		]);

		expect((await call('/email/unknown', {})).status).toBe(404);
		expect(sandbox.pendingFaults()).toBe(2);
		expect(await call(route, body)).toEqual({ status: 503, body: message('Service Unavailable') });
		await expect(call(route, body)).rejects.toThrow('fetch failed');
		sandbox.setOptions({ faultRate: 1 });
		expect(await call(route, body)).toEqual({ status: 500, body: INTERNAL_ERROR });
		sandbox.setOptions({ faultRate: 0 });
		expect(snapshot(sandbox)).toBe(before);

		sandbox.injectFaults({ path: /** @type {any} */ (route), action: 'drop' });
		await expect(call(route, body)).rejects.toThrow('fetch failed');
		expect(snapshot(sandbox)).not.toBe(before);
		expect((await call(route, body)).status).toBe(200);
		expect(sandbox.requests.slice(seen).map((recorded) => recorded.path)).toEqual([
			'/email/unknown',
			...Array(5).fill(route),
		]);
	},
);

test("fault: a status fault answers that status with the spec's body for it, or the body and headers given (a string as it is), without touching state", async () => {
	sandbox.injectFaults([
		{ status: 500 },
		{
			status: 429,
			body: { status: 'error', error: 'slow down' },
			headers: { 'Retry-After': '30' },
		},
		{ status: 502, body: '<html>Bad gateway</html>', headers: { 'Content-Type': 'text/html' } },
	]);
	expect(await call(SEND, mail())).toEqual({ status: 500, body: INTERNAL_ERROR });
	const slowDown = await request(sandbox, SEND, mail());
	expect([slowDown.status, await slowDown.json(), slowDown.headers.get('retry-after')]).toEqual([
		429,
		error('slow down'),
		'30',
	]);
	const gateway = await request(sandbox, SEND, mail());
	expect([gateway.status, await gateway.text(), gateway.headers.get('content-type')]).toEqual([
		502,
		'<html>Bad gateway</html>',
		'text/html',
	]);

	expect(sandbox.state.emails).toHaveLength(0);
	expect(await call(SEND, mail())).toMatchObject({
		status: 200,
		body: { data: { dailyEmailCount: 1 } },
	});
	expect(sandbox.requests).toHaveLength(4);
});

test.each([
	['sandbox: latencyMs delays every answer', () => sandbox.setOptions({ latencyMs: 120 })],
	[
		'fault: delay waits delayMs, then handles the request normally',
		() => sandbox.injectFaults({ action: 'delay', delayMs: 120 }),
	],
])('%s', async (_title, setUp) => {
	setUp();
	const startedAt = Date.now();
	expect((await call(SEND, mail())).status).toBe(200);
	expect(Date.now() - startedAt).toBeGreaterThanOrEqual(100);
});

test.each([
	['fault: hang never answers, and close() ends the hanging connection', {}, { action: 'hang' }],
	['fault: close() also ends requests waiting on a long latency', { latencyMs: 60_000 }, []],
])('%s', async (_title, options, faults) => {
	const own = await startSandbox(options);
	own.injectFaults(/** @type {any} */ (faults));
	const outcome = post(own, SEND, mail()).then(
		() => 'answered',
		() => 'failed',
	);
	await waitFor(() => own.requests.length === 1);
	expect(await Promise.race([outcome, sleep(200).then(() => 'pending')])).toBe('pending');

	const closeStartedAt = Date.now();
	await own.close();
	expect(Date.now() - closeStartedAt).toBeLessThan(1000);
	expect(await outcome).toBe('failed');
	expect(own.state.emails).toHaveLength(0);
});

test('fault: randomFaults with a seed draws the same mix every time', async () => {
	/** @param {number} seed */
	const statuses = async (seed) => {
		/** @type {number[]} */
		const seen = [];
		const randomFaults = [{ status: 500 }, { status: 503 }];
		await withSandbox({ faultRate: 0.5, faultSeed: seed, randomFaults }, async (own) => {
			for (let index = 0; index < 20; index++) seen.push((await post(own, SEND, mail())).status);
		});
		return seen;
	};
	const first = await statuses(7);
	expect(await statuses(7)).toEqual(first);
	expect(new Set(first)).toEqual(new Set([200, 500, 503]));
});

test('fault: injectFaults rejects malformed faults', () => {
	// @ts-expect-error deliberately invalid
	expect(() => sandbox.injectFaults({ action: 'explode' })).toThrow();
	// @ts-expect-error deliberately invalid
	expect(() => sandbox.injectFaults({ path: '/email/sned', status: 500 })).toThrow();
	expect(sandbox.pendingFaults()).toBe(0);
});

// ---------------------------------------------------------------- CLI

describe('cli', () => {
	const CLI = path.join(__dirname, 'cli.js');

	/** @param {string[]} args */
	function spawnCli(args) {
		const child = spawn(process.execPath, [CLI, '--port', '0', ...args], {
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		let stderr = '';
		child.stdout.on('data', (chunk) => (output += chunk));
		child.stderr.on('data', (chunk) => ((output += chunk), (stderr += chunk)));
		const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
		return { child, exited, output: () => output, stderr: () => stderr };
	}

	/** Starts the CLI and resolves once the banner is printed. @param {string[]} args */
	async function startCli(args) {
		const cli = spawnCli(args);
		await waitFor(() => cli.output().includes('Press Ctrl+C'), 5000);
		const baseUrl = /Base URL:\s+(\S+)/.exec(cli.output())?.[1] ?? '';
		const target = { baseUrl: baseUrl.replace('localhost', '127.0.0.1') };
		/** @param {string} route @param {unknown} body @param {Record<string, string>} [headers] */
		const send = (route, body, headers) => post(target, route, body, headers);
		/** Stops it with `signal`; it must exit with 0. */
		const stop = async (signal = /** @type {NodeJS.Signals} */ ('SIGTERM')) => {
			cli.child.kill(signal);
			expect(await cli.exited).toBe(0);
		};
		return { ...cli, baseUrl, send, stop };
	}

	/** Waits until the output has `count` lines with `text`. @param {{ output: () => string }} cli */
	const logged = (cli, /** @type {string} */ text, count = 1) =>
		waitFor(() => cli.output().split(text).length > count);

	test('cli: prints base URL, demo key, templates, senders and the campaign list field; logs the recipient and template of a sent email, new profiles (at most 10) and the recipients of a sent campaign; stops on SIGTERM', async () => {
		const cli = await startCli([]);
		expect(cli.baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/v0\/dev$/);
		for (const text of [
			DEMO_KEY,
			'tmpl_welcome (variables: firstName, company)',
			'hello@example.com, noreply@example.com',
			'Campaign lists:    read from recepientList',
		]) {
			expect(cli.output()).toContain(text);
		}

		const sent = await cli.send(SEND, templated({ firstName: 'Ann' }));
		expect(sent.status).toBe(200);
		expect((await cli.send(SEND, mail({ to: 'bob@customer.test' }))).status).toBe(200);
		expect((await cli.send(SEND, mail({ text: undefined, html: '<p>Hi</p>' }))).status).toBe(200);
		const buttons =
			'<a href="http://localhost:5678/webhook-waiting/7/n1?approved=false&amp;signature=ab">Decline</a>' +
			'<a href="http://localhost:5678/webhook-waiting/7/n1?approved=true&amp;signature=cd">Approve</a>';
		expect((await cli.send(SEND, mail({ text: undefined, html: buttons }))).status).toBe(200);
		await logged(cli, 'POST /email/send 200', 4);
		const { messageId } = sent.body.data;
		expect(cli.output()).toMatch(
			new RegExp(
				`POST /email/send 200 \\d+ms email ${messageId} to jane@customer\\.test, template tmpl_welcome\n`,
			),
		);
		expect(cli.output()).toMatch(
			/POST \/email\/send 200 \d+ms email msg_\S+ to bob@customer\.test, plain text\n/,
		);
		expect(cli.output()).toMatch(
			/POST \/email\/send 200 \d+ms email msg_\S+ to jane@customer\.test, HTML\n/,
		);
		// Send and Wait for Response: its answers can be clicked from the log.
		expect(cli.output()).toContain(
			'to jane@customer.test, HTML, link: http://localhost:5678/webhook-waiting/7/n1?approved=false&signature=ab, link: http://localhost:5678/webhook-waiting/7/n1?approved=true&signature=cd\n',
		);

		const twelve = newList(Array.from({ length: 12 }, (_, index) => `p${index}@customer.test`));
		expect((await cli.send(ADD, twelve)).status).toBe(200);
		await logged(cli, 'POST /list/addProfiles 200');
		expect(cli.output()).toMatch(
			/POST \/list\/addProfiles 200 \d+ms new profiles: prof_[0-9a-f]{16} p0@customer\.test, prof_[0-9a-f]{16} p1@customer\.test, .*p9@customer\.test \(\+2 more\)\n/,
		);
		// Known emails get no new IDs, so the second line has no summary.
		expect((await cli.send(ADD, twelve)).status).toBe(200);
		await logged(cli, 'POST /list/addProfiles 200', 2);
		expect(cli.output()).toMatch(/POST \/list\/addProfiles 200 \d+ms\n/);

		const { listId } = (await cli.send(ADD, newList(['ann@customer.test', 'bob@customer.test'])))
			.body.data;
		const created = await cli.send('/campaign/create', validCampaign({ recepientList: [listId] }));
		const campaignId = created.body.data.campaign._id;
		expect((await cli.send('/campaign/send', { campaignId })).body.status).toBe('success');
		await logged(cli, 'POST /campaign/send 200');
		const recipients = 'sent to 2 recipients: ann@customer\\.test, bob@customer\\.test\n';
		expect(cli.output()).toMatch(
			new RegExp(`POST /campaign/send 200 \\d+ms campaign ${campaignId} ${recipients}`),
		);
		expect(cli.output()).toMatch(/POST \/campaign\/create 200 \d+ms\n/);
		await cli.stop();
	});

	test('cli: honours --key, --daily-limit, --list-auth-header and --campaign-list-field; logs method, path and status, never the key; stops on SIGINT', async () => {
		const secret = 'be_secret_key_never_printed';
		const cli = await startCli([
			...['--key', secret, '--daily-limit', '1'],
			...['--list-auth-header', 'either', '--campaign-list-field', 'recipientList'],
		]);
		expect(cli.output()).toContain('Campaign lists:    read from recipientList');
		const auth = { authorization: `Bearer ${secret}` };
		expect((await cli.send(SEND, mail(), auth)).status).toBe(200);
		expect((await cli.send(SEND, mail(), auth)).status).toBe(429);
		expect((await cli.send(ADD, newList(), auth)).status).toBe(200);
		const campaign = { name: 'X', subject: 'Y', recipientList: 'not an array' };
		expect((await cli.send('/campaign/create', campaign, auth)).body).toEqual(
			error('Field "recipientList" must be an array of list IDs'),
		);

		await logged(cli, 'POST /campaign/create 400');
		expect(cli.output()).toMatch(/POST \/list\/addProfiles 200 \d+ms\n/);
		expect(cli.output()).toMatch(/POST \/email\/send 200/);
		expect(cli.output()).toMatch(/POST \/email\/send 429/);
		expect(cli.output()).not.toContain(secret);
		await cli.stop('SIGINT');
	});

	test('cli: an invalid --campaign-list-field stops with a readable error', async () => {
		const cli = spawnCli(['--campaign-list-field', 'x']);
		expect(await cli.exited).toBe(1);
		expect(cli.stderr()).toContain('Invalid option campaignListField');
	});
});
