// @ts-check
'use strict';

/**
 * Tests of the further published endpoints (Create List) over
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

// ---------------------------------------------------------------- faults and error shape

/**
 * A valid request for each path of this file, with what it needs set up first.
 * @type {Record<string, () => Promise<{ body: unknown }>>}
 */
const VALID_REQUESTS = {
	'/list/create': async () => ({ body: validList() }),
};
const PATHS = /** @type {import('./schemas').RoutePath[]} */ (Object.keys(VALID_REQUESTS));

/** How much state the valid requests change. */
const stateSize = () => sandbox.state.lists.size;

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
		answers.push(await createList(validList({ profiles: ['prof_missing'] })));
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
