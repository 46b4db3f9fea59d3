// @ts-check
'use strict';

/**
 * The sandbox over real HTTP. Titles say where a rule comes from: "spec:" = the published API
 * contract, "rule N:" = README "Assumptions where the spec is silent" (one test or table row per
 * rule), "sandbox:" / "fault:" / "cli:" = test tooling. Send Email, Add Profiles and the tooling
 * run against a sandbox with the defaults; Create List, Create Campaign and Send Campaign against
 * one with seeded profiles, lists and campaigns.
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { startSandbox } = require('./server');
const { ROUTES } = require('./routes');

const DEMO_KEY = 'be_sandbox_demo_key';
const AUTH = { authorization: `Bearer ${DEMO_KEY}` };
/** The published, misspelled header Add Profiles reads by default (README rule 14). */
const LIST_AUTH = { authroization: `Bearer ${DEMO_KEY}` };

/** @param {string} route */
const authFor = (route) => (route === '/list/addProfiles' ? LIST_AUTH : AUTH);

/**
 * POSTs a body (a string as it is) with, by default, the demo key where `route` reads it.
 * @param {{ baseUrl: string }} target @param {string} route @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
const request = (target, route, body, headers = authFor(route)) =>
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

/** The spec's error bodies: status 'error' plus exactly one text field, `error`... */
const error = (/** @type {string} */ text) => ({ status: 'error', error: text });
/** ...or `message` (401, 404 for a route, 500). */
const message = (/** @type {string} */ text) => ({ status: 'error', message: text });

const INVALID_KEY = message('Invalid API key');
const INVALID_JSON = error('Request body must be valid JSON');
const NOT_AN_OBJECT = error('Request body must be a JSON object');
const INTERNAL_ERROR = message('Internal server error. Please retry later.');
const required = (/** @type {string} */ field) => error(`Field "${field}" is required`);
const notString = (/** @type {string} */ field) => error(`Field "${field}" must be a string`);
const empty = (/** @type {string} */ field) => error(`Field "${field}" must not be empty`);

// Valid bodies, with the fields given changed.
/** @typedef {Record<string, unknown> | undefined} Fields */
const mail = (/** @type {Fields} */ fields) => ({
	to: 'jane@customer.test',
	from: 'hello@example.com',
	subject: 'Welcome aboard',
	text: 'Hello Jane',
	...fields,
});
const validList = (/** @type {Fields} */ fields) => ({
	listName: 'Newsletter',
	listDescription: 'Monthly news',
	...fields,
});
const validCampaign = (/** @type {Fields} */ fields) => ({
	name: 'Holiday Sale',
	subject: 'Exclusive 50% Off',
	content: '<p>Happy Holidays!</p>',
	...fields,
});

/**
 * The whole state as text, quota counters aside (a 429 starts the day's counter at 0): a
 * rejected request leaves it as it was.
 * @param {import('./server').SandboxHandle} target
 */
const snapshot = (target) =>
	JSON.stringify(target.state, (key, value) =>
		key === 'quota' ? undefined : value instanceof Map ? [...value] : value,
	);

/**
 * @typedef {[title: string, route: string, body: unknown, status: number, answer: object,
 *   headers?: Record<string, string>, options?: import('./server').SandboxOptions]} Rejection
 */

/**
 * The test of one rejected request, a row of a `test.each` table: the exact answer, so its error
 * body has exactly one text field (README rule 44), and the state unchanged. `options` are set
 * first; `headers` default to the demo key where the route reads it. (A rest parameter: jest
 * would take a function with more parameters than a row has columns for a `done` callback.)
 * @param {() => import('./server').SandboxHandle} target
 */
const expectRejected =
	(target) =>
	async (/** @type {Rejection} */ ...[, route, body, status, answer, headers, options]) => {
		if (options) target().setOptions(options);
		const before = snapshot(target());
		expect(await post(target(), route, body, headers)).toEqual({ status, body: answer });
		expect(snapshot(target())).toBe(before);
	};

/**
 * The rejections every route has: the spec's 401 without a key, with an unknown key and with the
 * key but no "Bearer"; then (`rule`: the README rule for the order of checks) the key checked
 * before the body, and the 400s for a body that is not JSON or not an object.
 * @param {string} rule @param {string} name @param {string} route @param {unknown} body
 * @param {unknown} notAnObject @returns {Rejection[]}
 */
function keyAndJsonRejections(rule, name, route, body, notAnObject) {
	const header = Object.keys(authFor(route))[0];
	const json = JSON.stringify(notAnObject);
	// prettier-ignore
	return [
		[`spec: ${name} without a key`, route, body, 401, INVALID_KEY, {}],
		[`spec: ${name} with an unknown key`, route, body, 401, INVALID_KEY, { [header]: 'Bearer x' }],
		[`spec: ${name} with the key but no "Bearer"`, route, body, 401, INVALID_KEY, { [header]: DEMO_KEY }],
		[`${rule}: ${name} checks the key before the body`, route, '{oops', 401, INVALID_KEY, {}],
		[`${rule}: ${name}, a body that is not JSON`, route, '{oops', 400, INVALID_JSON],
		[`${rule}: ${name}, a JSON body that is not an object: ${json}`, route, json, 400, NOT_AN_OBJECT],
	];
}

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {() => boolean} condition */
async function waitFor(condition, timeoutMs = 2000) {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
		await sleep(10);
	}
}

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

/** @type {Rejection[]} */
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

// ---------------------------------------------------------------- Create List, Create Campaign, Send Campaign

describe('with seeded profiles, lists and campaigns', () => {
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
	const SEEDED_CAMPAIGN = {
		_id: CAMPAIGN,
		name: 'Seeded',
		subject: 'Hi',
		recepientList: [ANN_LIST],
	};

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
			ids.push(
				(await call(CREATE_LIST, validList({ listName: `List ${index}` }))).body.data.listId,
			);
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
	 * @returns {Rejection[]}
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
		...unknown.map((/** @type {string} */ id) => /** @type {Rejection} */ (
			[`${unknownRule}: an unknown ${kind} ID ${JSON.stringify(id)}`, route, body([known, id]), 404,
				error(`${noun} "${id}" not found`)])),
	];
	}

	/** @type {Rejection[]} */
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

	describe('rule 44 on Create List, Create Campaign and Send Campaign', () => {
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
		expect((await call(CREATE_CAMPAIGN, validCampaign({ recipientList: 'oops' }))).status).toBe(
			200,
		);
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
});
