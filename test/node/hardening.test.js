// @ts-check
'use strict';

/**
 * The edges a careless server, a hostile proxy or an unlucky expression reach: redirects, echoed
 * secrets, unbounded numbers, answers that break the contract, slow bodies. Each test is named
 * after its rule; a foreign recording server stands for any host that is not BasicsEngage.
 */

const http = require('node:http');
const {
	API_KEY,
	addProfilesParameters,
	contacts,
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	listen,
	loopbackBaseUrl,
	runCredentialTest,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const CAMPAIGN_ID = 'cccccccccccccccccccccccc';

const sandbox = useSandbox({
	lists: [{ listId: 'lst_vip', name: 'VIP', profiles: [{ email: 'vip@customer.test' }] }],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'VIP news', subject: 'Hi', recepientList: ['lst_vip'] }],
});

/** @type {{ origin: string, requests: Array<{ method: string, url: string, headers: http.IncomingHttpHeaders }>, close: () => Promise<void> }} */
let foreign;

/** A host that is not BasicsEngage: it records what reaches it and answers a cheerful 200. */
async function startForeignServer() {
	/** @type {Array<{ method: string, url: string, headers: http.IncomingHttpHeaders }>} */
	const requests = [];
	const server = http.createServer((request, response) => {
		requests.push({
			method: String(request.method),
			url: String(request.url),
			headers: request.headers,
		});
		response.writeHead(200, { 'content-type': 'application/json' });
		response.end(
			JSON.stringify({ status: 'success', data: { messageId: 'foreign', listId: 'x' } }),
		);
	});
	const port = await listen(server);
	return {
		origin: `http://127.0.0.1:${port}`,
		requests,
		close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
	};
}

beforeAll(async () => {
	foreign = await startForeignServer();
});
afterEach(() => {
	foreign.requests.length = 0;
});
afterAll(() => foreign.close());

const OPERATIONS = {
	'Send Email': { parameters: sendParameters(), path: '/email/send' },
	'Add Profiles': {
		parameters: addProfilesParameters({ listMode: 'existing', listId: 'lst_vip' }),
		path: '/list/addProfiles',
	},
	'Create List': { parameters: createListParameters(), path: '/list/create' },
	'Create Campaign': {
		parameters: createCampaignParameters({ recipientListIds: 'lst_vip' }),
		path: '/campaign/create',
	},
	'Send Campaign': {
		parameters: sendCampaignParameters({ campaignId: CAMPAIGN_ID }),
		path: '/campaign/send',
	},
};
const operationNames = /** @type {Array<keyof typeof OPERATIONS>} */ (Object.keys(OPERATIONS));

describe('the API key never leaves for another host', () => {
	test.each([301, 302, 303, 307, 308])(
		'a %s from the base URL is not followed, in every operation',
		async (status) => {
			for (const name of operationNames) {
				sandbox.reset();
				sandbox.injectFaults([
					{ status, body: '', headers: { location: `${foreign.origin}/collect?token=s3cr3t` } },
				]);
				const result = await runNode(sandbox, {
					parameters: OPERATIONS[name].parameters,
					items: contacts(1),
					onError: 'continueErrorOutput',
				});
				expect(foreign.requests).toEqual([]);
				expect(result.success).toEqual([]);
				expect(result.errors).toHaveLength(1);
				const { error, details } = result.errors[0].json;
				expect(details).toMatchObject({ kind: 'unexpected_response', httpCode: status });
				// The status and the Location host, never its query string.
				expect(error).toContain(`HTTP ${status}`);
				expect(error).toContain(new URL(foreign.origin).host);
				expect(JSON.stringify(result.errors)).not.toContain('s3cr3t');
			}
		},
	);

	test('a redirected send is never sent again, even with Retry Send On Server Error', async () => {
		sandbox.injectFaults([{ status: 307, body: '', headers: { location: `${foreign.origin}/` } }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { retries: 3, retrySendOnServerError: true } }),
			items: contacts(1),
			onError: 'continueRegularOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(foreign.requests).toHaveLength(0);
		expect(result.success[0].json.details.description).toMatch(/may have been queued/);
	});

	test('a redirect to a host that refuses connections is not "never sent" and is not retried', async () => {
		sandbox.injectFaults([{ status: 302, body: '', headers: { location: 'http://127.0.0.1:9/' } }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { retries: 3 } }),
			items: contacts(1),
			onError: 'continueRegularOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(result.success[0].json.details.kind).toBe('unexpected_response');
	});

	test('the credential test does not follow a redirect', async () => {
		sandbox.injectFaults([{ status: 302, body: '', headers: { location: `${foreign.origin}/` } }]);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result.status).toBe('Error');
		expect(foreign.requests).toEqual([]);
	});
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

	test.each(Object.keys(echoes))(
		'the key echoed in %s is redacted from items, errors and logs, in every operation and both On Error modes',
		async (echo) => {
			for (const name of operationNames) {
				for (const onError of /** @type {const} */ (['continueErrorOutput', 'stopWorkflow'])) {
					sandbox.reset();
					sandbox.injectFaults([echoes[/** @type {keyof typeof echoes} */ (echo)]]);
					const result = await runNode(sandbox, {
						parameters: { ...OPERATIONS[name].parameters, options: { retries: 0 } },
						items: contacts(1),
						onError,
					});
					expect(sandbox.requests).toHaveLength(1);
					expectNoSecret(result, API_KEY);
					const shown = JSON.stringify(
						onError === 'stopWorkflow' ? result.error.description : result.errors,
					);
					expect(shown).toContain('[redacted]');
				}
			}
		},
	);

	test('the key echoed in any answer is redacted from the credential test result', async () => {
		for (const fault of Object.values(echoes)) {
			sandbox.reset();
			sandbox.injectFaults([fault]);
			const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
			expect(result.message).not.toContain(API_KEY);
		}
	});

	test('error text is capped: a 5 MB error becomes a few KB that say they were cut', async () => {
		const huge = 'x'.repeat(5 * 1024 * 1024);
		for (const fault of [
			{ status: 400, body: { status: 'error', error: huge } },
			{ status: 503, body: `<html>${huge}</html>` },
		]) {
			sandbox.reset();
			sandbox.injectFaults([fault]);
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(1),
				onError: 'continueErrorOutput',
			});
			const shown = JSON.stringify(result.errors[0].json);
			expect(shown.length).toBeLessThan(5000);
			expect(shown).toMatch(/cut: \d+ more characters/);
		}
	});

	test('a deeply nested JSON error body never throws: the items land on the error output', async () => {
		const depth = 100_000;
		const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
		for (const name of operationNames) {
			for (const status of [500, 200]) {
				sandbox.reset();
				sandbox.injectFaults([
					{ status, body: nested, headers: { 'content-type': 'application/json' } },
				]);
				const result = await runNode(sandbox, {
					parameters: OPERATIONS[name].parameters,
					items: contacts(2),
					onError: 'continueErrorOutput',
				});
				expect(result.error).toBeUndefined();
				expect(result.success.filter((item) => item.json.email !== undefined)).toEqual([]);
				expectEachInputExactlyOnce(result, 2);
			}
		}
	});
});

describe('every failure, configuration included, lands on the error side', () => {
	const badSettings = {
		'an API key with a line break': {
			run: { apiKey: 'be_sandbox\r\nX-Injected: 1' },
			names: /API key/,
			secret: 'X-Injected',
		},
		'a base URL that is not a URL': {
			run: { baseUrl: 'not a url at all' },
			names: /Base URL/,
			secret: 'not a url at all',
		},
		'a proxy that is not a URL': {
			run: { parameters: { requestOptions: { proxy: 'proxy with spaces' } } },
			names: /Proxy/,
			secret: 'proxy with spaces',
		},
	};

	test.each(Object.keys(badSettings))(
		'%s fails every item as invalid_input, naming the setting, with no request, in both Continue modes',
		async (setting) => {
			const { run, names, secret } = badSettings[/** @type {keyof typeof badSettings} */ (setting)];
			for (const name of operationNames) {
				for (const onError of /** @type {const} */ ([
					'continueErrorOutput',
					'continueRegularOutput',
				])) {
					const result = await runNode(sandbox, {
						...run,
						parameters: { ...OPERATIONS[name].parameters, ...run.parameters },
						items: contacts(3),
						onError,
					});
					expect(sandbox.requests).toHaveLength(0);
					const failed = onError === 'continueErrorOutput' ? result.errors : result.success;
					expect(failed).toHaveLength(3);
					expect(onError === 'continueErrorOutput' ? result.success : []).toEqual([]);
					for (const item of failed) {
						expect(item.json.details.kind).toBe('invalid_input');
						expect(item.json.error).toMatch(names);
						expect(JSON.stringify(item.json)).not.toContain(secret);
					}
					expectEachInputExactlyOnce({ success: result.success, errors: result.errors }, 3);
				}
			}
		},
	);
});

describe('numbers typed as expressions are read as numbers and held to their range', () => {
	const badNumbers = [
		['Retries', { options: { retries: '={{ "abc" }}' } }],
		['Retries', { options: { retries: '={{ NaN }}' } }],
		['Retries', { options: { retries: '={{ Infinity }}' } }],
		['Retries', { options: { retries: '={{ 11 }}' } }],
		['Retry Wait', { options: { retryWait: '={{ 60001 }}' } }],
		['Retry Wait', { options: { retryWait: '={{ -1 }}' } }],
		['Timeout', { requestOptions: { timeout: '={{ "soon" }}' } }],
		[
			'Items per Batch',
			{ requestOptions: { batching: { batch: { batchSize: '={{ 2.5 }}', batchInterval: 10 } } } },
		],
	];
	const concurrency = [
		['Concurrency', { options: { concurrency: '={{ Infinity }}' } }],
		['Concurrency', { options: { concurrency: '={{ 0 }}' } }],
		['Concurrency', { options: { concurrency: '={{ "many" }}' } }],
	];
	const sendOnly = concurrency;
	const addProfilesOnly = [
		['Batch Size', { options: { batchSize: '={{ NaN }}' } }],
		['Batch Size', { options: { batchSize: '={{ 1001 }}' } }],
		...concurrency,
	];

	test.each([
		...[...badNumbers, ...sendOnly].map(([label, parameters]) => ['Send Email', label, parameters]),
		...[...badNumbers, ...addProfilesOnly].map(([label, parameters]) => [
			'Add Profiles',
			label,
			parameters,
		]),
		...['Create List', 'Create Campaign', 'Send Campaign'].flatMap((name) =>
			badNumbers.map(([label, parameters]) => [name, label, parameters]),
		),
	])('%s: %s = %j is refused as invalid_input, nothing sent', async (name, label, parameters) => {
		const operation = OPERATIONS[/** @type {keyof typeof OPERATIONS} */ (name)];
		const result = await runNode(sandbox, {
			parameters: { ...operation.parameters, ...parameters },
			items: contacts(2),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(0);
		expect(result.errors).toHaveLength(2);
		expect(result.errors[0].json.details.kind).toBe('invalid_input');
		expect(result.errors[0].json.error).toContain(String(label));
	});

	test('numbers given as text by an expression are read as numbers', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				options: { retries: '={{ "1" }}', concurrency: '={{ "2" }}', retryWait: '={{ "10" }}' },
			}),
			items: contacts(3),
		});
		expect(result.error).toBeUndefined();
		expect(result.success).toHaveLength(3);
	});
});

describe('a 200 must be the contract 200', () => {
	const brokenSuccesses = {
		'status "error"': { status: 'error', data: { messageId: 'm1' } },
		'an empty object': {},
		'a list': [],
		null: null,
		'data that is not an object': { status: 'success', data: 'queued' },
		'no messageId': { status: 'success', data: { dailyEmailCount: 1, dailyEmailLimit: 100 } },
	};

	/** The next request is answered 200 with this broken success, as JSON. @param {string} shape */
	const answerBrokenSuccess = (shape) =>
		sandbox.injectFaults([
			{
				status: 200,
				body: JSON.stringify(brokenSuccesses[/** @type {keyof typeof brokenSuccesses} */ (shape)]),
				headers: { 'content-type': 'application/json' },
			},
		]);

	test.each(Object.keys(brokenSuccesses))(
		'Send Email: a 200 with %s is unexpected_response, says the email may have been queued, and is not retried',
		async (shape) => {
			answerBrokenSuccess(shape);
			const result = await runNode(sandbox, {
				parameters: sendParameters({ options: { retries: 3, retrySendOnServerError: true } }),
				items: contacts(1),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(1);
			expect(result.success).toEqual([]);
			expect(result.errors[0].json.details).toMatchObject({
				kind: 'unexpected_response',
				httpCode: 200,
			});
			expect(result.errors[0].json.details.description).toMatch(/may have been queued/);
		},
	);

	test('Add Profiles: a 200 without listId or addedCount is unexpected_response', async () => {
		for (const data of [{ addedCount: 1 }, { listId: 'lst_vip' }, { listId: '', addedCount: 1 }]) {
			sandbox.reset();
			sandbox.injectFaults([{ status: 200, body: { status: 'success', data } }]);
			const result = await runNode(sandbox, {
				parameters: OPERATIONS['Add Profiles'].parameters,
				items: contacts(1),
				onError: 'continueErrorOutput',
			});
			expect(result.errors[0].json.details.kind).toBe('unexpected_response');
			expect(result.success).toEqual([]);
		}
	});

	test('Create List: a 200 without listId is unexpected_response, may have created it, and is not retried', async () => {
		for (const data of [{}, { listId: '' }, { listId: 42 }]) {
			sandbox.reset();
			sandbox.injectFaults([{ status: 200, body: { status: 'success', data } }]);
			const result = await runNode(sandbox, {
				parameters: { ...OPERATIONS['Create List'].parameters, options: { retries: 3 } },
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(1);
			expect(result.success).toEqual([]);
			expect(result.errors[0].json.details.kind).toBe('unexpected_response');
			expect(result.errors[0].json.details.description).toMatch(/the list may have been created/);
		}
	});

	test.each(Object.keys(brokenSuccesses).filter((shape) => !/data|messageId/.test(shape)))(
		'Send Campaign: a 200 with %s is unexpected_response, says the campaign may have started sending, and is not retried',
		async (shape) => {
			answerBrokenSuccess(shape);
			const result = await runNode(sandbox, {
				parameters: { ...OPERATIONS['Send Campaign'].parameters, options: { retries: 3 } },
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(1);
			expect(result.success).toEqual([]);
			expect(result.errors[0].json.details.kind).toBe('unexpected_response');
			expect(result.errors[0].json.error).toMatch(/may have started sending/);
		},
	);

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

	test.each([
		['a 5xx', { status: 500 }],
		['a dropped connection', { action: 'drop' }],
		['a timeout', { action: 'hang' }],
	])(
		'On Error = Stop: after %s, the error says the email may have been sent, not "not sent"',
		async (_, fault) => {
			sandbox.injectFaults([/** @type {any} */ (fault)]);
			const result = await runNode(sandbox, {
				parameters: sendParameters({ requestOptions: { timeout: 300 } }),
				items: contacts(1),
			});
			const { description } = result.error;
			expect(description).not.toMatch(/No email was sent|not sent/i);
			expect(description).toMatch(/may have been queued: check before sending it again/);
		},
	);

	test('only a failure before the request left is "never sent": a refused connection to the base URL', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { retries: 0 } }),
			items: contacts(1),
			baseUrl: 'http://127.0.0.1:9/api/v0/dev',
			onError: 'continueErrorOutput',
		});
		expect(result.errors[0].json.details.description).toMatch(/never reached BasicsEngage/);
	});
});
