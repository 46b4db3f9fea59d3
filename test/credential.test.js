// @ts-check
'use strict';

const { API_KEY, runCredentialTest, runNode, sendParameters, useSandbox } = require('./support');

const { engine } = require('./harness/resolve');

/** @typedef {import('./sandbox/server').Fault} Fault */

/** n8n 1.x's NodeApiError puts stock text in place of a socket error's code. */
const V1 = engine.major === 1;

const sandbox = useSandbox();

describe('credential test (as n8n runs it from the credential dialog)', () => {
	const OK = { status: 'OK', message: 'Connection successful!' };
	const failed = (/** @type {unknown} */ message) => ({ status: 'Error', message });

	test('a valid key passes: the probe gets 400 for its invalid recipient, so it sends no email and creates no list', async () => {
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result).toEqual(OK);
		expect(sandbox.requests).toEqual([
			expect.objectContaining({ method: 'POST', path: '/email/send', answer: 400 }),
		]);
		expect(sandbox.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
		expect([sandbox.state.emails.length, sandbox.state.lists.size]).toEqual([0, 0]);
	});

	// [case, credential data, the next answer, what the dialog shows]. Every answer reaches the
	// credential's body rules, on both lines. A 404 names the Base URL: test/node/settings-and-input.
	/** @typedef {[string, { apiKey?: string, baseUrl?: string }, Fault | undefined, object]} Answer @type {Answer[]} */
	const ANSWERS = [
		[
			'spec: an invalid key (401) fails with "Invalid API key"',
			{ apiKey: 'be_wrong_key' },
			undefined,
			failed('Invalid API key'),
		],
		[
			'a trailing slash and spaces in the base URL or key are tolerated',
			{ apiKey: ` ${API_KEY} `, baseUrl: ' <sandbox>/ ' },
			undefined,
			OK,
		],
		[
			'a used-up quota (429) passes: its body carries `error` like the 400, and the key works',
			{},
			{ status: 429 },
			OK,
		],
		...[500, 503, 403].map(
			/** @returns {Answer} */ (status) => [
				`any other answer (${status}) fails, saying the server may have failed or a setting is wrong`,
				{},
				{ status, body: { status: 'error', message: 'nope' } },
				failed(expect.stringMatching(/did not accept the test request/)),
			],
		),
		[
			'a base URL that answers 200 but is not BasicsEngage fails',
			{},
			{ status: 200, body: '<html>a website</html>' },
			failed(expect.stringMatching(/not like the BasicsEngage API/)),
		],
		[
			'a base URL where nothing listens fails with the connection error',
			{ baseUrl: 'http://127.0.0.1:9/api/v0/dev' },
			undefined,
			failed(V1 ? 'The service refused the connection - perhaps it is offline' : 'ECONNREFUSED'),
		],
	];
	test.each(ANSWERS)('%s', async (_case, data, answer, shown) => {
		if (answer) sandbox.injectFaults([answer]);
		const baseUrl = (data.baseUrl ?? '<sandbox>').replace('<sandbox>', sandbox.baseUrl);
		const result = await runCredentialTest({ apiKey: data.apiKey ?? API_KEY, baseUrl });
		expect(result).toEqual(shown);
		expect(result.message).not.toContain('be_wrong_key');
		if (shown === OK) expect(sandbox.requests[0].path).toBe('/email/send');
	});
});

// A key that cannot be a header, or a Base URL that is not one, per operation:
// test/node/operations.test.js.
test('credential in node runs: spaces around the key and the base URL, and trailing slashes, are tolerated', async () => {
	const result = await runNode(sandbox, {
		parameters: sendParameters(),
		items: [{ email: 'jane@customer.test' }],
		apiKey: ` \t${API_KEY}\r\n `,
		baseUrl: ` \t${sandbox.baseUrl}// `,
	});
	expect(result.error).toBeUndefined();
	const sent = sandbox.requests.map((request) => [request.path, request.headers.authorization]);
	expect(sent).toEqual([['/email/send', `Bearer ${API_KEY}`]]);
});
