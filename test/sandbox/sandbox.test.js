// @ts-check
'use strict';

/**
 * Tests of the sandbox over real HTTP. Names say which source a rule comes from:
 * "spec:" = the published API contract, "assumption:" = README "Assumptions where the
 * spec is silent", "fault:" / "sandbox:" / "cli:" = test tooling.
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { startSandbox } = require('./server');

const DEMO_KEY = 'be_sandbox_demo_key';
const SEND_AUTH = { authorization: `Bearer ${DEMO_KEY}` };
const LIST_AUTH = { authroization: `Bearer ${DEMO_KEY}` };
const PROFILE_ID = /^prof_[0-9a-f]{16}$/;

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
	return {
		status: response.status,
		body: isJson && text ? JSON.parse(text) : undefined,
		text,
		headers: response.headers,
	};
}

/** @param {unknown} body @param {Record<string, string>} [headers] */
const sendEmail = (body, headers = SEND_AUTH) => post('/email/send', body, headers);
/** @param {unknown} body @param {Record<string, string>} [headers] */
const addProfiles = (body, headers = LIST_AUTH) => post('/list/addProfiles', body, headers);

/** @param {Record<string, unknown>} [overrides] */
const validEmail = (overrides = {}) => ({
	to: 'jane@customer.test',
	from: 'hello@example.com',
	subject: 'Welcome aboard',
	text: 'Hello Jane',
	...overrides,
});

/** The spec's error shape: status 'error' plus exactly one text field. */
const errorBody = (/** @type {'error' | 'message'} */ field, /** @type {string} */ text) => ({
	status: 'error',
	[field]: text,
});

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {() => boolean} condition */
async function waitFor(condition, timeoutMs = 2000) {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
		await sleep(10);
	}
}

// ---------------------------------------------------------------- spec rules: send

describe('POST /email/send (spec)', () => {
	test('spec: a valid email is queued: 200 with status, message and data (messageId, count, limit)', async () => {
		const { status, body } = await sendEmail(validEmail());

		expect(status).toBe(200);
		expect(body).toEqual({
			status: 'success',
			message: 'Email queued successfully',
			data: { messageId: expect.any(String), dailyEmailCount: 1, dailyEmailLimit: 100 },
		});
		expect(sandbox.state.emails).toEqual([
			expect.objectContaining({
				messageId: body.data.messageId,
				to: 'jane@customer.test',
				subject: 'Welcome aboard',
			}),
		]);
	});

	test('spec: messageId is unique per queued email', async () => {
		const first = await sendEmail(validEmail());
		const second = await sendEmail(validEmail());
		expect(first.body.data.messageId).not.toBe(second.body.data.messageId);
	});

	test('spec: POST /email/send without a valid key answers 401 with message', async () => {
		const invalidKey = errorBody('message', 'Invalid API key');
		const attempts = [
			{},
			{ authorization: 'Bearer not_a_key' },
			{ authorization: DEMO_KEY },
			{ authroization: `Bearer ${DEMO_KEY}` },
		];
		for (const headers of attempts) {
			const { status, body } = await sendEmail(validEmail(), headers);
			expect({ headers, status, body }).toEqual({ headers, status: 401, body: invalidKey });
		}
		expect(sandbox.state.emails).toHaveLength(0);
	});

	test('spec: invalid "to" answers 400 with error', async () => {
		for (const to of ['not-an-email', 'jane@', '', 'Jane <jane@customer.test>']) {
			const { status, body } = await sendEmail(validEmail({ to }));
			expect({ to, status, body }).toEqual({
				to,
				status: 400,
				body: errorBody('error', 'Invalid email format for field "to"'),
			});
		}
	});

	test('spec: quota exhausted answers 429 with error, count and limit in each success', async () => {
		sandbox.setOptions({ dailyLimit: 2 });

		const first = await sendEmail(validEmail());
		const second = await sendEmail(validEmail());
		const third = await sendEmail(validEmail());

		expect(first.body.data).toMatchObject({ dailyEmailCount: 1, dailyEmailLimit: 2 });
		expect(second.body.data).toMatchObject({ dailyEmailCount: 2, dailyEmailLimit: 2 });
		expect(third.status).toBe(429);
		expect(third.body).toEqual(
			errorBody('error', 'Daily email quota exceeded. Please try again tomorrow.'),
		);
		expect(sandbox.state.emails).toHaveLength(2);
	});

	test('spec: an unexpected server failure answers 500 with message', async () => {
		sandbox.setOptions({
			now: () => {
				throw new Error('clock broke');
			},
		});
		const { status, body } = await sendEmail(validEmail());
		expect(status).toBe(500);
		expect(body).toEqual(errorBody('message', 'Internal server error. Please retry later.'));
	});
});

// ---------------------------------------------------------------- spec rules: list

describe('POST /list/addProfiles (spec)', () => {
	test('spec: list endpoint reads the Authroization header as published', async () => {
		const published = await addProfiles({
			name: 'Customers',
			profiles: [{ email: 'a@customer.test' }],
		});
		expect(published.status).toBe(200);

		// Default listAuthHeader: only the published (misspelled) name is read.
		const correctSpelling = await addProfiles(
			{ name: 'Customers', profiles: [{ email: 'a@customer.test' }] },
			{ authorization: `Bearer ${DEMO_KEY}` },
		);
		expect(correctSpelling.status).toBe(401);
		expect(correctSpelling.body).toEqual(errorBody('message', 'Invalid API key'));
	});

	test('spec: list endpoint with a wrong or missing key answers 401 with message', async () => {
		for (const headers of [{}, { authroization: 'Bearer wrong' }, { authroization: DEMO_KEY }]) {
			const { status, body } = await addProfiles({ name: 'X', profiles: [] }, headers);
			expect({ headers, status, body }).toEqual({
				headers,
				status: 401,
				body: errorBody('message', 'Invalid API key'),
			});
		}
		expect(sandbox.state.lists.size).toBe(0);
	});

	test('spec: addProfiles without listId creates a list', async () => {
		const { status, body } = await addProfiles({
			name: 'Newsletter',
			description: 'Monthly news',
			profiles: [
				{ email: 'ann@customer.test', firstName: 'Ann', lastName: 'Lee' },
				{ email: 'bob@customer.test' },
			],
		});

		expect(status).toBe(200);
		expect(body).toEqual({
			status: 'success',
			data: { listId: expect.any(String), addedCount: 2 },
		});
		const list = sandbox.state.lists.get(body.data.listId);
		expect(list).toMatchObject({
			listId: body.data.listId,
			name: 'Newsletter',
			description: 'Monthly news',
		});
		expect([...(list?.profiles.values() ?? [])]).toEqual([
			{
				profileId: expect.stringMatching(PROFILE_ID),
				email: 'ann@customer.test',
				firstName: 'Ann',
				lastName: 'Lee',
			},
			{ profileId: expect.stringMatching(PROFILE_ID), email: 'bob@customer.test' },
		]);
	});

	test('spec: with listId adds to that list', async () => {
		const created = await addProfiles({
			name: 'Newsletter',
			profiles: [{ email: 'ann@customer.test' }],
		});
		const listId = created.body.data.listId;

		const { status, body } = await addProfiles({
			listId,
			profiles: [{ email: 'bob@customer.test' }],
		});

		expect(status).toBe(200);
		expect(body).toEqual({ status: 'success', data: { listId, addedCount: 1 } });
		expect(sandbox.state.lists.size).toBe(1);
		expect([...(sandbox.state.lists.get(listId)?.profiles.keys() ?? [])]).toEqual([
			'ann@customer.test',
			'bob@customer.test',
		]);
	});

	test('spec: missing profiles answers 400', async () => {
		const { status, body } = await addProfiles({ name: 'Newsletter' });
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'profiles array is required'));
	});
});

// ---------------------------------------------------------------- assumptions: send

describe('POST /email/send (assumptions where the spec is silent)', () => {
	test('assumption: authentication is checked before the body is parsed', async () => {
		const { status } = await sendEmail('{not json', { authorization: 'Bearer wrong' });
		expect(status).toBe(401);
	});

	test('assumption: a body that is not valid JSON answers 400 with error', async () => {
		for (const raw of ['{not json', '']) {
			const { status, body } = await sendEmail(raw);
			expect({ raw, status, body }).toEqual({
				raw,
				status: 400,
				body: errorBody('error', 'Request body must be valid JSON'),
			});
		}
	});

	test('assumption: a JSON body that is not an object answers 400', async () => {
		const { status, body } = await sendEmail([validEmail()]);
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Request body must be a JSON object'));
	});

	test('assumption: missing to/from/subject answers 400 naming the field', async () => {
		for (const field of ['to', 'from', 'subject']) {
			const email = validEmail();
			delete email[field];
			const { status, body } = await sendEmail(email);
			expect({ field, status, body }).toEqual({
				field,
				status: 400,
				body: errorBody('error', `Field "${field}" is required`),
			});
		}
	});

	test('assumption: non-string to/from/subject/html/text/templateId answers 400 naming the field', async () => {
		for (const field of ['to', 'from', 'subject', 'html', 'text', 'templateId']) {
			const { status, body } = await sendEmail(validEmail({ text: undefined, [field]: 42 }));
			expect({ field, status, body }).toEqual({
				field,
				status: 400,
				body: errorBody('error', `Field "${field}" must be a string`),
			});
		}
		const nullText = await sendEmail(validEmail({ text: null }));
		expect(nullText.body).toEqual(errorBody('error', 'Field "text" must be a string'));
	});

	test('assumption: an empty subject answers 400', async () => {
		const { status, body } = await sendEmail(validEmail({ subject: '' }));
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Field "subject" must not be empty'));
	});

	test('assumption: "from" must be a valid email address', async () => {
		const { status, body } = await sendEmail(validEmail({ from: 'hello' }));
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Invalid email format for field "from"'));
	});

	test('assumption: an unverified sender answers 400 naming the sender', async () => {
		const { status, body } = await sendEmail(validEmail({ from: 'someone@elsewhere.test' }));
		expect(status).toBe(400);
		expect(body).toEqual(
			errorBody('error', 'Sender "someone@elsewhere.test" is not a verified sender'),
		);
	});

	test('assumption: verified senders are compared case-insensitively', async () => {
		const { status } = await sendEmail(validEmail({ from: 'Hello@Example.com' }));
		expect(status).toBe(200);
	});

	test('assumption: verifiedSenders null accepts any sender', async () => {
		sandbox.setOptions({ verifiedSenders: null });
		const { status } = await sendEmail(validEmail({ from: 'someone@elsewhere.test' }));
		expect(status).toBe(200);
	});

	test('assumption: none or more than one of html/text/templateId answers 400', async () => {
		const cases = [
			{ text: undefined },
			{ html: '<p>Hi</p>' },
			{ templateId: 'tmpl_welcome' },
			{ text: undefined, html: '<p>Hi</p>', templateId: 'tmpl_welcome' },
		];
		for (const overrides of cases) {
			const { status, body } = await sendEmail(validEmail(overrides));
			expect({ overrides, status, body }).toEqual({
				overrides,
				status: 400,
				body: errorBody('error', 'Provide exactly one of html, text or templateId'),
			});
		}
	});

	test('assumption: an empty string counts as given for html/text/templateId', async () => {
		const { status, body } = await sendEmail(validEmail({ html: '' }));
		expect(status).toBe(400);
		expect(body.error).toBe('Provide exactly one of html, text or templateId');
	});

	test('assumption: html alone, text alone and templateId alone are each accepted', async () => {
		for (const content of [{ html: '<p>Hi</p>' }, { text: 'Hi' }, { templateId: 'tmpl_welcome' }]) {
			const { status } = await sendEmail(validEmail({ text: undefined, ...content }));
			expect({ content, status }).toEqual({ content, status: 200 });
		}
	});

	test('assumption: an unknown templateId answers 400', async () => {
		const { status, body } = await sendEmail(
			validEmail({ text: undefined, templateId: 'tmpl_missing' }),
		);
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'Template "tmpl_missing" not found'));
	});

	test('assumption: a templateVariables key not in the template answers 400 naming the key', async () => {
		const { status, body } = await sendEmail(
			validEmail({
				text: undefined,
				templateId: 'tmpl_welcome',
				templateVariables: { firstName: 'Jane', plan: 'Pro' },
			}),
		);
		expect(status).toBe(400);
		expect(body).toEqual(
			errorBody('error', 'Template variable "plan" does not exist in template "tmpl_welcome"'),
		);
	});

	test('assumption: number and boolean template values are accepted and stored as strings', async () => {
		const { status } = await sendEmail(
			validEmail({
				text: undefined,
				templateId: 'tmpl_welcome',
				templateVariables: { firstName: 'Jane', company: 42 },
			}),
		);
		expect(status).toBe(200);
		expect(sandbox.state.emails[0].templateVariables).toEqual({ firstName: 'Jane', company: '42' });
	});

	test('assumption: object, array or null template values answer 400 naming the key', async () => {
		for (const value of [{ name: 'Acme' }, ['Acme'], null]) {
			const { status, body } = await sendEmail(
				validEmail({
					text: undefined,
					templateId: 'tmpl_welcome',
					templateVariables: { company: value },
				}),
			);
			expect({ value, status, body }).toEqual({
				value,
				status: 400,
				body: errorBody('error', 'Template variable "company" must be a string, number or boolean'),
			});
		}
	});

	test('assumption: templateVariables must be an object and needs templateId', async () => {
		const notObject = await sendEmail(
			validEmail({ text: undefined, templateId: 'tmpl_welcome', templateVariables: 'x' }),
		);
		expect(notObject.body).toEqual(
			errorBody('error', 'Field "templateVariables" must be an object'),
		);

		const withoutTemplate = await sendEmail(
			validEmail({ templateVariables: { firstName: 'Jane' } }),
		);
		expect(withoutTemplate.status).toBe(400);
		expect(withoutTemplate.body).toEqual(
			errorBody('error', 'templateVariables can only be used together with templateId'),
		);
	});

	test('assumption: unknown body fields are ignored', async () => {
		const { status } = await sendEmail(validEmail({ replyTo: 'x@y.test' }));
		expect(status).toBe(200);
		expect(sandbox.state.emails[0]).not.toHaveProperty('replyTo');
	});

	test('assumption: failed requests do not count against the quota', async () => {
		sandbox.setOptions({ dailyLimit: 1 });
		await sendEmail(validEmail({ to: 'bad' }));
		await sendEmail(validEmail({ from: 'someone@elsewhere.test' }));
		await sendEmail(validEmail(), { authorization: 'Bearer wrong' });

		const { status, body } = await sendEmail(validEmail());
		expect(status).toBe(200);
		expect(body.data.dailyEmailCount).toBe(1);
	});

	test('assumption: validation comes before the quota, so an invalid email at the limit answers 400', async () => {
		sandbox.setOptions({ dailyLimit: 0 });
		expect((await sendEmail(validEmail({ to: 'bad' }))).status).toBe(400);
		expect((await sendEmail(validEmail())).status).toBe(429);
	});

	test('assumption: the quota is counted per API key', async () => {
		sandbox.setOptions({ apiKeys: [DEMO_KEY, 'be_second_key'], dailyLimit: 1 });
		expect((await sendEmail(validEmail())).status).toBe(200);
		expect((await sendEmail(validEmail())).status).toBe(429);
		const other = await sendEmail(validEmail(), { authorization: 'Bearer be_second_key' });
		expect(other.status).toBe(200);
		expect(other.body.data.dailyEmailCount).toBe(1);
	});

	test('assumption: the quota starts again at 0 on the next UTC day', async () => {
		let clock = new Date('2025-03-01T23:59:00Z');
		sandbox.setOptions({ dailyLimit: 1, now: () => clock });
		expect((await sendEmail(validEmail())).status).toBe(200);
		expect((await sendEmail(validEmail())).status).toBe(429);

		clock = new Date('2025-03-02T00:00:01Z');
		const nextDay = await sendEmail(validEmail());
		expect(nextDay.status).toBe(200);
		expect(nextDay.body.data.dailyEmailCount).toBe(1);
	});

	test('assumption: the Bearer scheme is case-insensitive', async () => {
		expect((await sendEmail(validEmail(), { authorization: `bearer ${DEMO_KEY}` })).status).toBe(
			200,
		);
	});
});

// ---------------------------------------------------------------- assumptions: list

describe('POST /list/addProfiles (assumptions where the spec is silent)', () => {
	test('assumption: listAuthHeader "Authorization" reads only the correct spelling', async () => {
		sandbox.setOptions({ listAuthHeader: 'Authorization' });
		const body = { name: 'X', profiles: [] };
		expect((await addProfiles(body, { authorization: `Bearer ${DEMO_KEY}` })).status).toBe(200);
		expect((await addProfiles(body, LIST_AUTH)).status).toBe(401);
	});

	test('assumption: listAuthHeader "either" reads both spellings', async () => {
		sandbox.setOptions({ listAuthHeader: 'either' });
		const body = { name: 'X', profiles: [] };
		expect((await addProfiles(body, { authorization: `Bearer ${DEMO_KEY}` })).status).toBe(200);
		expect((await addProfiles(body, LIST_AUTH)).status).toBe(200);
		expect((await addProfiles(body, {})).status).toBe(401);
	});

	test('assumption: a body that is not valid JSON answers 400 with error, after authentication', async () => {
		expect((await addProfiles('{oops')).body).toEqual(
			errorBody('error', 'Request body must be valid JSON'),
		);
		expect((await addProfiles('{oops', {})).status).toBe(401);
	});

	test('assumption: profiles that is not an array answers 400 like a missing one', async () => {
		const { status, body } = await addProfiles({
			name: 'X',
			profiles: { email: 'a@customer.test' },
		});
		expect(status).toBe(400);
		expect(body).toEqual(errorBody('error', 'profiles array is required'));
	});

	test('assumption: a profile without a valid email answers 400 naming the index, and nothing is stored', async () => {
		const cases = [
			[{ firstName: 'No email' }, 'profiles[1].email must be a valid email address'],
			[{ email: 'not-an-email' }, 'profiles[1].email must be a valid email address'],
			['a@customer.test', 'profiles[1] must be an object with an email'],
			[{ email: 'b@customer.test', firstName: 7 }, 'profiles[1].firstName must be a string'],
		];
		for (const [badProfile, message] of cases) {
			const { status, body } = await addProfiles({
				name: 'X',
				profiles: [{ email: 'a@customer.test' }, badProfile],
			});
			expect({ badProfile, status, body }).toEqual({
				badProfile,
				status: 400,
				body: errorBody('error', message),
			});
		}
		expect(sandbox.state.lists.size).toBe(0);
	});

	test('assumption: without listId a missing or blank name answers 400', async () => {
		for (const name of [undefined, '', '   ']) {
			const { status, body } = await addProfiles({
				name,
				profiles: [{ email: 'a@customer.test' }],
			});
			expect({ name, status, body }).toEqual({
				name,
				status: 400,
				body: errorBody('error', 'name is required when listId is not provided'),
			});
		}
	});

	test('assumption: an unknown listId answers 404 with error', async () => {
		for (const listId of ['list_does_not_exist', '']) {
			const { status, body } = await addProfiles({
				listId,
				profiles: [{ email: 'a@customer.test' }],
			});
			expect({ listId, status, body }).toEqual({
				listId,
				status: 404,
				body: errorBody('error', 'List not found'),
			});
		}
	});

	test('assumption: with listId, name and description are ignored', async () => {
		const listId = (await addProfiles({ name: 'Original', profiles: [] })).body.data.listId;
		await addProfiles({ listId, name: 'Renamed', description: 'New', profiles: [] });
		expect(sandbox.state.lists.get(listId)).toMatchObject({
			name: 'Original',
			description: undefined,
		});
	});

	test('assumption: duplicate emails (already listed or repeated, any case) are not added or counted', async () => {
		const created = await addProfiles({
			name: 'X',
			profiles: [
				{ email: 'ann@customer.test', firstName: 'Ann' },
				{ email: 'ANN@customer.test', firstName: 'Other' },
			],
		});
		expect(created.body.data.addedCount).toBe(1);

		const listId = created.body.data.listId;
		const again = await addProfiles({
			listId,
			profiles: [{ email: 'Ann@Customer.test' }, { email: 'bob@customer.test' }],
		});
		expect(again.body.data.addedCount).toBe(1);

		const profiles = [...(sandbox.state.lists.get(listId)?.profiles.values() ?? [])];
		expect(profiles).toEqual([
			{ profileId: expect.any(String), email: 'ann@customer.test', firstName: 'Ann' },
			{ profileId: expect.any(String), email: 'bob@customer.test' },
		]);
	});

	test('assumption: an empty profiles array is accepted with addedCount 0', async () => {
		const { status, body } = await addProfiles({ name: 'Empty', profiles: [] });
		expect(status).toBe(200);
		expect(body.data.addedCount).toBe(0);
		expect(sandbox.state.lists.has(body.data.listId)).toBe(true);
	});

	test('assumption: each new list gets its own listId', async () => {
		const first = await addProfiles({ name: 'A', profiles: [] });
		const second = await addProfiles({ name: 'A', profiles: [] });
		expect(first.body.data.listId).not.toBe(second.body.data.listId);
	});

	test('assumption: an email gets one profileId in the whole account, the first time it is added', async () => {
		const first = await addProfiles({
			name: 'A',
			profiles: [{ email: 'ann@customer.test', firstName: 'Ann' }],
		});
		const second = await addProfiles({
			name: 'B',
			profiles: [
				{ email: 'ANN@customer.test', firstName: 'Annie' },
				{ email: 'bob@customer.test' },
			],
		});

		const entry = (/** @type {string} */ listId, /** @type {string} */ email) =>
			sandbox.state.lists.get(listId)?.profiles.get(email);
		const annInA = entry(first.body.data.listId, 'ann@customer.test');
		const annInB = entry(second.body.data.listId, 'ann@customer.test');
		expect(annInA?.profileId).toMatch(PROFILE_ID);
		expect(annInB?.profileId).toBe(annInA?.profileId);
		// Each list keeps the fields it was given; the account keeps the first ones.
		expect(annInB).toMatchObject({ email: 'ANN@customer.test', firstName: 'Annie' });
		expect([...sandbox.state.profiles.values()]).toEqual([
			{ profileId: annInA?.profileId, email: 'ann@customer.test', firstName: 'Ann' },
			{ profileId: expect.stringMatching(PROFILE_ID), email: 'bob@customer.test' },
		]);
		expect(sandbox.state.profileIdsByEmail.get('ann@customer.test')).toBe(annInA?.profileId);
	});

	test('assumption: a rejected request creates no profiles', async () => {
		await addProfiles({ name: 'X', profiles: [{ email: 'a@customer.test' }, { email: 'bad' }] });
		await addProfiles({ listId: 'nope', profiles: [{ email: 'a@customer.test' }] });
		expect(sandbox.state.profiles.size).toBe(0);
	});
});

// ---------------------------------------------------------------- routing and recording

describe('sandbox harness', () => {
	test('sandbox: unknown routes and other methods answer 404 with message', async () => {
		const expected = { status: 404, body: errorBody('message', 'Not found') };
		expect(await post('/email/unknown', {}, SEND_AUTH)).toMatchObject(expected);

		const get = await fetch(`${sandbox.baseUrl}/email/send`, { headers: SEND_AUTH });
		expect({ status: get.status, body: await get.json() }).toEqual(expected);

		const outsideBasePath = await fetch(`${sandbox.origin}/email/send`, {
			method: 'POST',
			headers: SEND_AUTH,
			body: '{}',
		});
		expect({ status: outsideBasePath.status, body: await outsideBasePath.json() }).toEqual(
			expected,
		);
		// Outside basePath the recorded path is the full path; `url` shows where the request went.
		expect(sandbox.requests.at(-1)).toMatchObject({ path: '/email/send', url: '/email/send' });
	});

	test('sandbox: every request is recorded, rejected ones included', async () => {
		await sendEmail(validEmail(), { authorization: 'Bearer wrong', 'X-Trace': 'abc' });
		await sendEmail('{broken');
		await addProfiles({ name: 'X', profiles: [] });

		expect(sandbox.requests).toHaveLength(3);
		const [rejected, broken, listCall] = sandbox.requests;
		expect(rejected).toMatchObject({
			method: 'POST',
			path: '/email/send',
			body: validEmail(),
			rawBody: JSON.stringify(validEmail()),
			receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
		});
		expect(rejected.headers).toMatchObject({
			authorization: 'Bearer wrong',
			'x-trace': 'abc',
			'content-type': 'application/json',
		});
		expect(broken).toMatchObject({ body: undefined, rawBody: '{broken' });
		expect(listCall).toMatchObject({
			path: '/list/addProfiles',
			headers: expect.objectContaining({ authroization: `Bearer ${DEMO_KEY}` }),
		});
	});

	test('sandbox: every error body has status "error" and exactly one text field', async () => {
		sandbox.setOptions({ dailyLimit: 0 });
		const answers = [
			await sendEmail(validEmail(), {}),
			await sendEmail(validEmail({ to: 'x' })),
			await sendEmail(validEmail()),
			await addProfiles({}),
			await addProfiles({}, {}),
			await addProfiles({ listId: 'nope', profiles: [] }),
			await post('/nowhere', {}, {}),
		];
		for (const { status, body } of answers) {
			expect(status).toBeGreaterThanOrEqual(400);
			const keys = Object.keys(body).sort();
			expect(body.status).toBe('error');
			expect([
				['error', 'status'],
				['message', 'status'],
			]).toContainEqual(keys);
		}
	});

	test('sandbox: defaults are the documented ones', () => {
		expect(sandbox.options).toMatchObject({
			host: '127.0.0.1',
			basePath: '/api/v0/dev',
			apiKeys: [DEMO_KEY],
			dailyLimit: 100,
			templates: { tmpl_welcome: ['firstName', 'company'] },
			verifiedSenders: ['hello@example.com', 'noreply@example.com'],
			listAuthHeader: 'Authroization',
			latencyMs: 0,
		});
		expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}/api/v0/dev`);
		expect(sandbox.origin).toBe(`http://127.0.0.1:${sandbox.port}`);
	});

	test('sandbox: reset() restores options and clears state, requests and faults', async () => {
		sandbox.setOptions({ dailyLimit: 1 });
		await sendEmail(validEmail());
		await addProfiles({ name: 'X', profiles: [{ email: 'a@customer.test' }] });
		sandbox.injectFaults({ status: 500 });

		sandbox.reset();

		expect(sandbox.options.dailyLimit).toBe(100);
		expect(sandbox.requests).toHaveLength(0);
		expect(sandbox.state.emails).toHaveLength(0);
		expect(sandbox.state.lists.size).toBe(0);
		expect(sandbox.state.profiles.size).toBe(0);
		expect(sandbox.state.profileIdsByEmail.size).toBe(0);
		expect(sandbox.pendingFaults()).toBe(0);
		expect((await sendEmail(validEmail())).body.data.dailyEmailCount).toBe(1);
	});

	test('sandbox: setOptions() refuses options fixed at start and invalid values', () => {
		expect(() => sandbox.setOptions({ port: 1234 })).toThrow('Cannot change port after start');
		expect(() => sandbox.setOptions({ profiles: [] })).toThrow(
			'Cannot change profiles after start',
		);
		// @ts-expect-error deliberately invalid
		expect(() => sandbox.setOptions({ listAuthHeader: 'Auth' })).toThrow();
		expect(() => sandbox.setOptions({ dailyLimit: -1 })).toThrow();
	});

	test('sandbox: custom keys, templates and seeded lists', async () => {
		const custom = await startSandbox({
			apiKeys: ['be_custom'],
			templates: { tmpl_order: ['orderId'] },
			lists: [
				{ listId: 'list_seeded', name: 'Seeded', profiles: [{ email: 'old@customer.test' }] },
			],
		});
		try {
			const auth = { authorization: 'Bearer be_custom' };
			const email = validEmail({
				text: undefined,
				templateId: 'tmpl_order',
				templateVariables: { orderId: 'A-1' },
			});
			expect((await post('/email/send', email, auth, custom)).status).toBe(200);
			expect((await post('/email/send', validEmail(), SEND_AUTH, custom)).status).toBe(401);

			const added = await post(
				'/list/addProfiles',
				{
					listId: 'list_seeded',
					profiles: [{ email: 'old@customer.test' }, { email: 'new@customer.test' }],
				},
				{ authroization: 'Bearer be_custom' },
				custom,
			);
			expect(added.body).toEqual({
				status: 'success',
				data: { listId: 'list_seeded', addedCount: 1 },
			});

			custom.reset();
			expect(custom.state.lists.get('list_seeded')?.profiles.size).toBe(1);
		} finally {
			await custom.close();
		}
	});

	test('sandbox: seeded profiles keep their profileId, and seeded lists take it by email', async () => {
		const custom = await startSandbox({
			profiles: [{ profileId: 'prof_ann', email: 'Ann@customer.test', firstName: 'Ann' }],
			lists: [
				{
					listId: 'list_seeded',
					profiles: [{ email: 'ann@customer.test' }, { email: 'bob@customer.test' }],
				},
			],
		});
		try {
			const check = () => {
				const seeded = custom.state.lists.get('list_seeded')?.profiles;
				expect(seeded?.get('ann@customer.test')?.profileId).toBe('prof_ann');
				expect(seeded?.get('bob@customer.test')?.profileId).toMatch(PROFILE_ID);
				expect(custom.state.profiles.get('prof_ann')).toEqual({
					profileId: 'prof_ann',
					email: 'Ann@customer.test',
					firstName: 'Ann',
				});
				expect(custom.state.profiles.size).toBe(2);
			};
			check();
			await post(
				'/list/addProfiles',
				{ name: 'X', profiles: [{ email: 'carl@customer.test' }] },
				LIST_AUTH,
				custom,
			);
			custom.reset();
			check();
		} finally {
			await custom.close();
		}
	});

	test('sandbox: seeded profiles must not repeat a profileId or an email', async () => {
		const ann = { profileId: 'prof_ann', email: 'ann@customer.test' };
		await expect(startSandbox({ profiles: [ann, { ...ann, email: 'b@x.test' }] })).rejects.toThrow(
			'profileId prof_ann is seeded twice',
		);
		await expect(
			startSandbox({ profiles: [ann, { profileId: 'prof_2', email: 'ANN@customer.test' }] }),
		).rejects.toThrow('email ANN@customer.test is seeded twice');
	});

	test('sandbox: latencyMs delays every answer', async () => {
		sandbox.setOptions({ latencyMs: 120 });
		const startedAt = Date.now();
		expect((await sendEmail(validEmail())).status).toBe(200);
		expect(Date.now() - startedAt).toBeGreaterThanOrEqual(100);
	});
});

// ---------------------------------------------------------------- faults

describe('fault injection', () => {
	test('fault: a status fault answers that status and body without touching state, then normal handling resumes', async () => {
		sandbox.injectFaults([
			{ status: 500 },
			{
				status: 429,
				body: { status: 'error', error: 'slow down' },
				headers: { 'Retry-After': '30' },
			},
		]);

		const first = await sendEmail(validEmail());
		expect(first.status).toBe(500);
		expect(first.body).toEqual(errorBody('message', 'Internal server error. Please retry later.'));

		const second = await sendEmail(validEmail());
		expect(second.status).toBe(429);
		expect(second.body).toEqual({ status: 'error', error: 'slow down' });
		expect(second.headers.get('retry-after')).toBe('30');

		expect(sandbox.state.emails).toHaveLength(0);
		const third = await sendEmail(validEmail());
		expect(third.status).toBe(200);
		expect(third.body.data.dailyEmailCount).toBe(1);
		expect(sandbox.requests).toHaveLength(3);
	});

	test('fault: a string body is sent as it is', async () => {
		sandbox.injectFaults({
			status: 502,
			body: '<html>Bad gateway</html>',
			headers: { 'Content-Type': 'text/html' },
		});
		const { status, text, headers } = await sendEmail(validEmail());
		expect(status).toBe(502);
		expect(text).toBe('<html>Bad gateway</html>');
		expect(headers.get('content-type')).toBe('text/html');
	});

	test('fault: a fault with a path is consumed only by a request to that path', async () => {
		sandbox.injectFaults({ path: '/list/addProfiles', status: 503 });

		expect((await sendEmail(validEmail())).status).toBe(200);
		expect(sandbox.pendingFaults()).toBe(1);

		const faulted = await addProfiles({ name: 'X', profiles: [] });
		expect(faulted).toMatchObject({
			status: 503,
			body: errorBody('message', 'Service Unavailable'),
		});
		expect(sandbox.state.lists.size).toBe(0);
		expect((await addProfiles({ name: 'X', profiles: [] })).status).toBe(200);
	});

	test('fault: reset destroys the connection without a response', async () => {
		sandbox.injectFaults({ action: 'reset' });
		await expect(sendEmail(validEmail())).rejects.toThrow('fetch failed');
		expect(sandbox.requests).toHaveLength(1);
		expect(sandbox.state.emails).toHaveLength(0);
		expect((await sendEmail(validEmail())).status).toBe(200);
	});

	test('fault: drop handles the request (the email is queued) but answers nothing', async () => {
		sandbox.injectFaults({ action: 'drop' });
		await expect(sendEmail(validEmail())).rejects.toThrow('fetch failed');
		expect(sandbox.state.emails).toHaveLength(1);
	});

	test('fault: delay waits delayMs, then handles the request normally', async () => {
		sandbox.injectFaults({ action: 'delay', delayMs: 150 });
		const startedAt = Date.now();
		const { status } = await sendEmail(validEmail());
		expect(status).toBe(200);
		expect(Date.now() - startedAt).toBeGreaterThanOrEqual(130);
	});

	test('fault: hang never answers, and close() ends the hanging connection', async () => {
		const own = await startSandbox();
		own.injectFaults({ action: 'hang' });

		const outcome = post('/email/send', validEmail(), SEND_AUTH, own).then(
			() => 'answered',
			() => 'failed',
		);
		await waitFor(() => own.requests.length === 1);
		const stillPending = await Promise.race([outcome, sleep(200).then(() => 'pending')]);
		expect(stillPending).toBe('pending');

		const closeStartedAt = Date.now();
		await own.close();
		expect(Date.now() - closeStartedAt).toBeLessThan(1000);
		expect(await outcome).toBe('failed');
		expect(own.state.emails).toHaveLength(0);
	});

	test('fault: close() also ends requests waiting on a long delay', async () => {
		const own = await startSandbox({ latencyMs: 60_000 });
		const outcome = post('/email/send', validEmail(), SEND_AUTH, own).then(
			() => 'answered',
			() => 'failed',
		);
		await waitFor(() => own.requests.length === 1);
		await own.close();
		expect(await outcome).toBe('failed');
	});

	test('fault: faultRate 1 answers 500 to every request without a scripted fault', async () => {
		sandbox.setOptions({ faultRate: 1 });
		const { status, body } = await sendEmail(validEmail());
		expect(status).toBe(500);
		expect(body).toEqual(errorBody('message', 'Internal server error. Please retry later.'));
		expect(sandbox.state.emails).toHaveLength(0);
	});

	test('fault: randomFaults with a seed draws the same mix every time', async () => {
		/** @param {number} seed */
		const statuses = async (seed) => {
			const own = await startSandbox({
				faultRate: 0.5,
				faultSeed: seed,
				randomFaults: [{ status: 500 }, { status: 503 }],
			});
			const seen = [];
			for (let index = 0; index < 20; index++) {
				seen.push((await post('/email/send', validEmail(), SEND_AUTH, own)).status);
			}
			await own.close();
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
});

// ---------------------------------------------------------------- CLI

describe('cli', () => {
	const CLI = path.join(__dirname, 'cli.js');

	/**
	 * Starts the CLI and resolves once the banner is printed.
	 * @param {string[]} args
	 */
	async function startCli(args) {
		const child = spawn(process.execPath, [CLI, '--port', '0', ...args], {
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let output = '';
		child.stdout.on('data', (chunk) => (output += chunk));
		child.stderr.on('data', (chunk) => (output += chunk));
		const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
		await waitFor(() => output.includes('Press Ctrl+C'), 5000);
		const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] ?? '';
		return { child, exited, baseUrl, output: () => output };
	}

	test('cli: logs the profileId and email of each profile new to the account', async () => {
		const cli = await startCli([]);
		const url = cli.baseUrl.replace('localhost', '127.0.0.1');
		const profiles = Array.from({ length: 12 }, (_, index) => ({
			email: `p${index}@customer.test`,
		}));
		const add = () =>
			fetch(`${url}/list/addProfiles`, {
				method: 'POST',
				headers: { ...LIST_AUTH, 'content-type': 'application/json' },
				body: JSON.stringify({ name: 'X', profiles }),
			});
		expect((await add()).status).toBe(200);
		await waitFor(() => cli.output().includes('POST /list/addProfiles 200'));
		expect(cli.output()).toMatch(
			/POST \/list\/addProfiles 200 \d+ms new profiles: prof_[0-9a-f]{16} p0@customer\.test, prof_[0-9a-f]{16} p1@customer\.test, .*p9@customer\.test \(\+2 more\)\n/,
		);

		// Known emails get no new IDs, so the second line has no summary.
		expect((await add()).status).toBe(200);
		await waitFor(() => cli.output().match(/POST \/list\/addProfiles 200/g)?.length === 2);
		expect(cli.output()).toMatch(/POST \/list\/addProfiles 200 \d+ms\n/);

		cli.child.kill('SIGTERM');
		expect(await cli.exited).toBe(0);
	});

	test('cli: --campaign-list-field sets the list IDs field Create Campaign reads, and the banner shows it', async () => {
		const published = await startCli([]);
		expect(published.output()).toContain('Campaign lists:    read from recepientList');
		published.child.kill('SIGTERM');
		expect(await published.exited).toBe(0);

		const cli = await startCli(['--campaign-list-field', 'recipientList']);
		expect(cli.output()).toContain('Campaign lists:    read from recipientList');
		const url = cli.baseUrl.replace('localhost', '127.0.0.1');
		const answer = await fetch(`${url}/campaign/create`, {
			method: 'POST',
			headers: { ...SEND_AUTH, 'content-type': 'application/json' },
			body: JSON.stringify({ name: 'X', subject: 'Y', recipientList: 'not an array' }),
		});
		expect(await answer.json()).toEqual(
			errorBody('error', 'Field "recipientList" must be an array of list IDs'),
		);
		cli.child.kill('SIGTERM');
		expect(await cli.exited).toBe(0);
	});

	test('cli: an invalid --campaign-list-field stops with a readable error', async () => {
		const child = spawn(process.execPath, [CLI, '--port', '0', '--campaign-list-field', 'x'], {
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stderr = '';
		child.stderr.on('data', (chunk) => (stderr += chunk));
		const code = await new Promise((resolve) => child.on('exit', resolve));
		expect(code).toBe(1);
		expect(stderr).toContain('Invalid option campaignListField');
	});

	test('cli: logs the recipients of a sent campaign', async () => {
		const cli = await startCli([]);
		const url = cli.baseUrl.replace('localhost', '127.0.0.1');
		/** @param {string} route @param {unknown} body @param {Record<string, string>} auth */
		const call = async (route, body, auth) => {
			const response = await fetch(`${url}${route}`, {
				method: 'POST',
				headers: { ...auth, 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			return response.json();
		};
		const list = await call(
			'/list/addProfiles',
			{ name: 'X', profiles: [{ email: 'ann@customer.test' }, { email: 'bob@customer.test' }] },
			LIST_AUTH,
		);
		const created = await call(
			'/campaign/create',
			{ name: 'Sale', subject: 'Hi', recepientList: [list.data.listId] },
			SEND_AUTH,
		);
		const campaignId = created.data.campaign._id;
		expect((await call('/campaign/send', { campaignId }, SEND_AUTH)).status).toBe('success');

		await waitFor(() => cli.output().includes('POST /campaign/send 200'));
		expect(cli.output()).toMatch(
			new RegExp(
				`POST /campaign/send 200 \\d+ms campaign ${campaignId} sent to 2 recipients: ann@customer\\.test, bob@customer\\.test\n`,
			),
		);
		expect(cli.output()).toMatch(/POST \/campaign\/create 200 \d+ms\n/);

		cli.child.kill('SIGTERM');
		expect(await cli.exited).toBe(0);
	});

	test('cli: prints base URL, demo key, templates and verified senders; stops cleanly on SIGTERM', async () => {
		const cli = await startCli([]);
		expect(cli.baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/v0\/dev$/);
		expect(cli.output()).toContain(DEMO_KEY);
		expect(cli.output()).toContain('tmpl_welcome (variables: firstName, company)');
		expect(cli.output()).toContain('hello@example.com, noreply@example.com');

		cli.child.kill('SIGTERM');
		expect(await cli.exited).toBe(0);
	});

	test('cli: logs method, path and status per request, never the key; honours its flags', async () => {
		const secret = 'be_secret_key_never_printed';
		const cli = await startCli([
			'--key',
			secret,
			'--daily-limit',
			'1',
			'--list-auth-header',
			'either',
		]);
		const url = cli.baseUrl.replace('localhost', '127.0.0.1');
		const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

		const send = () =>
			fetch(`${url}/email/send`, { method: 'POST', headers, body: JSON.stringify(validEmail()) });
		expect((await send()).status).toBe(200);
		expect((await send()).status).toBe(429);
		const list = await fetch(`${url}/list/addProfiles`, {
			method: 'POST',
			headers,
			body: JSON.stringify({ name: 'X', profiles: [] }),
		});
		expect(list.status).toBe(200);

		await waitFor(() => cli.output().includes('POST /list/addProfiles 200'));
		expect(cli.output()).toMatch(/POST \/list\/addProfiles 200 \d+ms\n/);
		expect(cli.output()).toMatch(/POST \/email\/send 200/);
		expect(cli.output()).toMatch(/POST \/email\/send 429/);
		expect(cli.output()).not.toContain(secret);

		cli.child.kill('SIGINT');
		expect(await cli.exited).toBe(0);
	});
});
