// @ts-check
'use strict';

const http = require('node:http');
const { API_KEY, runCredentialTest, runNode, sendParameters, useSandbox } = require('./support');

const { engine } = require('./harness/resolve');

/**
 * n8n 1.x treats `ignoreHttpStatusErrors: { ignore: true, except }` as "ignore every status", so
 * there every answer reaches the credential's body rules and none its status rules.
 */
const V1 = engine.major === 1;

const sandbox = useSandbox();

describe('credential test (as n8n runs it from the credential dialog)', () => {
	test('a valid key passes: the probe gets 400 for its invalid recipient, so it sends no email and creates no list', async () => {
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(sandbox.requests).toEqual([
			expect.objectContaining({ method: 'POST', path: '/email/send', answer: 400 }),
		]);
		expect(sandbox.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
		expect([sandbox.state.emails.length, sandbox.state.lists.size]).toEqual([0, 0]);
	});

	test('spec: an invalid key (401) fails with "Invalid API key"', async () => {
		const result = await runCredentialTest({ apiKey: 'be_wrong_key', baseUrl: sandbox.baseUrl });
		expect(result).toEqual({ status: 'Error', message: 'Invalid API key' });
		expect(result.message).not.toContain('be_wrong_key');
	});

	test('a trailing slash and spaces in the base URL or key are tolerated', async () => {
		const result = await runCredentialTest({
			apiKey: ` ${API_KEY} `,
			baseUrl: ` ${sandbox.baseUrl}/ `,
		});
		expect(result.status).toBe('OK');
		expect(sandbox.requests[0].path).toBe('/email/send');
	});

	test('a used-up quota (429) fails with a message saying so', async () => {
		sandbox.injectFaults([{ status: 429 }]);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		// On 1.x the 429 body carries `error` like the 400 that proves the key: the key works.
		expect(result).toEqual(
			V1
				? { status: 'OK', message: 'Connection successful!' }
				: { status: 'Error', message: expect.stringMatching(/quota/) },
		);
	});

	// A 404 names the Base URL instead: test/node/settings-and-input.test.js.
	test.each([500, 503, 403])('any other answer (%s) fails with its status text', async (status) => {
		sandbox.injectFaults([{ status, body: { status: 'error', message: 'nope' } }]);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result.status).toBe('Error');
		expect(result.message).toEqual(
			V1 ? expect.stringMatching(/did not accept the test request/) : http.STATUS_CODES[status],
		);
	});

	test('a base URL that answers 200 but is not BasicsEngage fails', async () => {
		sandbox.injectFaults([{ status: 200, body: '<html>a website</html>' }]);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/not like the BasicsEngage API/),
		});
	});

	test('a base URL where nothing listens fails with the connection error', async () => {
		const result = await runCredentialTest({
			apiKey: API_KEY,
			baseUrl: 'http://127.0.0.1:9/api/v0/dev',
		});
		expect(result.status).toBe('Error');
		// n8n-workflow 1.x drops the socket error's code from NodeApiError; its message remains.
		expect(result.message).toEqual(
			V1 ? expect.stringMatching(/refused|ECONNREFUSED/i) : 'ECONNREFUSED',
		);
	});
});

describe('credential in node runs', () => {
	// [case, credential data, the run's error message (none: it runs)]. A key that cannot be a
	// header, per operation: test/node/operations.test.js.
	test.each([
		[
			'spaces around the key and the base URL, and trailing slashes, are tolerated',
			{ apiKey: ` \t${API_KEY}\r\n `, baseUrl: ' \t<sandbox>// ' },
			undefined,
		],
		[
			'a base URL that is not http(s) is refused with a clear message',
			{ baseUrl: 'api.basicsengage.com/api/v0/dev' },
			/^The Base URL in the credential is not valid\. Fix it before trying again\.$/,
		],
	])('%s', async (_case, { apiKey, baseUrl }, message) => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [{ email: 'jane@customer.test' }],
			apiKey,
			baseUrl: baseUrl?.replace('<sandbox>', sandbox.baseUrl),
		});
		expect(result.error?.message).toEqual(message && expect.stringMatching(message));
		expect(
			sandbox.requests.map((request) => [request.path, request.headers.authorization]),
		).toEqual(message ? [] : [['/email/send', `Bearer ${API_KEY}`]]);
	});
});
