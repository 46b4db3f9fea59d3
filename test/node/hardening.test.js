// @ts-check
'use strict';

/**
 * The edges a careless server or a hostile proxy reach beyond one answer's classification (that
 * is test/unit/answers.test.js; per operation, test/node/operations.test.js): the credential
 * test's redirects and echoes, bodies nested too deep or dripping, a new list's broken answer.
 */

const http = require('node:http');
const {
	API_KEY,
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	listen,
	loopbackBaseUrl,
	runCredentialTest,
	runNode,
	sendParameters,
	useSandbox,
	VIP_SANDBOX,
} = require('../support');

const sandbox = useSandbox(VIP_SANDBOX);

test('the API key never leaves for another host: the credential test does not follow a redirect', async () => {
	// Redirected to the sandbox's own origin: a followed redirect would be its second request.
	sandbox.injectFaults([
		{ status: 302, body: '', headers: { location: `${sandbox.baseUrl}/elsewhere` } },
	]);
	const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
	expect(result.status).toBe('Error');
	expect(sandbox.requests).toHaveLength(1);
});

describe('server text is untrusted', () => {
	const echoes = {
		'a 400 error text': { status: 400, body: { status: 'error', error: `bad key ${API_KEY}` } },
		'a 401 message with Bearer': {
			status: 401,
			body: { status: 'error', message: `Invalid API key: Bearer ${API_KEY}` },
		},
		'a 429 error text': { status: 429, body: { status: 'error', error: `quota for ${API_KEY}` } },
		'a 500 HTML page': {
			status: 500,
			body: `<html><pre>Authorization: Bearer ${API_KEY}</pre></html>`,
		},
		'a 502 debug object': {
			status: 502,
			body: { debug: { headers: { authorization: `Bearer ${API_KEY}` } } },
		},
		'a 200 that breaks the contract': {
			status: 200,
			body: { status: 'error', echo: { key: API_KEY } },
		},
	};

	test('the key echoed in any answer is redacted from the credential test result', async () => {
		for (const fault of Object.values(echoes)) {
			sandbox.reset();
			sandbox.injectFaults([fault]);
			const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
			expect(result.message).not.toContain(API_KEY);
		}
	});

	test('a deeply nested JSON error body never throws: the items land on the error output', async () => {
		const depth = 100_000;
		const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
		// The transport reads every operation's answers; what it shows of them: test/unit/answers.
		for (const status of [500, 200]) {
			sandbox.reset();
			sandbox.injectFaults([
				{ status, body: nested, headers: { 'content-type': 'application/json' } },
			]);
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(2),
				onError: 'continueErrorOutput',
			});
			expect(result.error).toBeUndefined();
			expect(result.errors).toHaveLength(1);
			expectEachInputExactlyOnce(result, 2);
		}
	});
});

describe('a 200 must be the contract 200', () => {
	test('Create New List: a first 200 without listId sends no later batch; those items fail clearly', async () => {
		sandbox.injectFaults([{ status: 200, body: { status: 'success', data: { addedCount: 2 } } }]);
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2 } }),
			items: contacts(6),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(result.success).toEqual([]);
		expect(result.errors).toHaveLength(6);
		expect(result.errors.slice(0, 2).map((item) => item.json.details.kind)).toEqual([
			'unexpected_response',
			'unexpected_response',
		]);
		for (const item of result.errors.slice(2)) {
			expect(item.json.error).toMatch(/^Not sent: .*list may exist/);
		}
		expect(JSON.stringify(result.errors)).not.toContain('"undefined"');
		expectEachInputExactlyOnce(result, 6);
	});
});

describe('timeouts and honest wording', () => {
	test('the timeout bounds the whole answer: headers then a dripping body fail at the timeout', async () => {
		const sockets = new Set();
		const dripping = http.createServer((request, response) => {
			response.writeHead(200, { 'content-type': 'application/json' });
			response.write('{"status":"success",');
			const drip = setInterval(() => response.write(' '), 100);
			response.on('close', () => clearInterval(drip));
		});
		dripping.on('connection', (socket) => sockets.add(socket));
		const port = await listen(dripping);
		try {
			const started = Date.now();
			const result = await runNode(sandbox, {
				parameters: sendParameters({ requestOptions: { timeout: 500 } }),
				items: contacts(1),
				baseUrl: loopbackBaseUrl(port),
				onError: 'continueErrorOutput',
			});
			// The body would drip for ever; n8n's own timeout never fires on a busy connection.
			expect(Date.now() - started).toBeLessThan(10_000);
			expect(result.errors[0].json.details.kind).toBe('network_error');
			expect(result.errors[0].json.error).toMatch(/timed out/);
			expect(result.errors[0].json.details.description).toMatch(/may have been queued/);
		} finally {
			dripping.closeAllConnections();
			dripping.close();
		}
	});
});
