// @ts-check
'use strict';

const {
	API_KEY,
	addProfilesParameters,
	closedBaseUrl,
	contacts,
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	pairedIndexes,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ lists: [{ listId: 'lst_news', name: 'News' }] });

const errorDetails = (/** @type {any[]} */ items) => items.map((item) => item.json.details);

/**
 * The run's one item failed with this kind and HTTP code, on the error output, paired to input
 * item 0, and the key shows nowhere. The failed item, for what a test checks beyond that.
 * @param {import('../harness/n8n').RunWorkflowResult} result
 * @param {{ kind: string, httpCode: number | null, apiKey?: string }} expected
 */
function expectOneFailedItem(result, { kind, httpCode, apiKey = API_KEY }) {
	expect(result.error).toBeUndefined();
	expect(result.success).toEqual([]);
	expect(result.errors).toHaveLength(1);
	const [failed] = result.errors;
	expect(failed.pairedItem).toEqual({ item: 0 });
	expect(failed.json.details).toEqual({ kind, httpCode, description: expect.any(String) });
	expectNoSecret(result, apiKey);
	return failed;
}

describe('error kinds on the error output (On Error: Continue (using error output))', () => {
	/** Each case: how to provoke it, and what the failed item must say. */
	const cases = [
		{
			kind: 'invalid_request',
			httpCode: 400,
			spec: 'spec: invalid "to" answers 400 with `error`',
			// Passes the node's own check (it looks like an address) but the sandbox refuses it.
			arrange: () =>
				sandbox.injectFaults([
					{
						path: '/email/send',
						status: 400,
						body: { status: 'error', error: 'Invalid email format for field "to"' },
					},
				]),
			message: /Invalid email format for field "to"/,
		},
		{
			kind: 'invalid_api_key',
			httpCode: 401,
			spec: 'spec: an invalid key answers 401 with `message`',
			apiKey: 'be_wrong_key',
			message: /BasicsEngage rejected the API key/,
		},
		{
			kind: 'quota_exceeded',
			httpCode: 429,
			spec: 'spec: an exhausted daily quota answers 429 with `error`',
			arrange: () => sandbox.setOptions({ dailyLimit: 0 }),
			message: /quota/i,
		},
		{
			kind: 'server_error',
			httpCode: 500,
			spec: 'spec: an internal error answers 500 with `message`',
			arrange: () => sandbox.injectFaults([{ path: '/email/send', status: 500 }]),
			message: /Internal server error/i,
		},
		{
			kind: 'unexpected_response',
			httpCode: 418,
			spec: 'other statuses keep their code',
			arrange: () =>
				sandbox.injectFaults([
					{ path: '/email/send', status: 418, body: { status: 'error', error: 'I am a teapot' } },
				]),
			message: /I am a teapot/,
		},
	];

	test.each(cases)('$kind ($spec)', async ({ kind, httpCode, arrange, apiKey, message }) => {
		arrange?.();
		const items = [{ email: 'jane@customer.test', crmId: 'c-1' }];
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items,
			apiKey,
			onError: 'continueErrorOutput',
		});

		const failed = expectOneFailedItem(result, { kind, httpCode, apiKey });
		// n8n merges the input item's fields under the error, so users keep their data.
		expect(failed.json).toMatchObject({ email: 'jane@customer.test', crmId: 'c-1' });
		expect(failed.json.error).toMatch(message);
	});

	test('network_error: nothing listens at the base URL', async () => {
		const result = await runNode(sandbox, {
			// Retried (it never arrived), with the shortest wait: the retries are not the point here.
			parameters: sendParameters({ options: { retryWait: 1 } }),
			items: contacts(2),
			baseUrl: await closedBaseUrl(),
			onError: 'continueErrorOutput',
		});
		expect(errorDetails(result.errors)).toEqual([
			{ kind: 'network_error', httpCode: null, description: expect.any(String) },
			{ kind: 'network_error', httpCode: null, description: expect.any(String) },
		]);
		expect(result.errors[0].json.error).toBe(
			'BasicsEngage could not be reached: the connection was refused',
		);
		expect(result.errors[0].json.details.description).toMatch(/ECONNREFUSED/);
		expectEachInputExactlyOnce(result, 2);
	});

	test('network_error: the request times out (Request Options > Timeout)', async () => {
		sandbox.injectFaults([{ path: '/email/send', action: 'hang' }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters({ requestOptions: { timeout: 300 } }),
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		expect(errorDetails(result.errors)).toEqual([
			{ kind: 'network_error', httpCode: null, description: expect.any(String) },
		]);
		expect(result.errors[0].json.error).toMatch(/timed out/);
	});

	test('a 2xx answer that is not JSON fails with its status and a short excerpt', async () => {
		sandbox.injectFaults([{ path: '/email/send', status: 200, body: 'down for maintenance' }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		expect(result.errors[0].json.details).toMatchObject({
			kind: 'unexpected_response',
			httpCode: 200,
		});
		expect(result.errors[0].json.details.description).toContain('down for maintenance');
	});

	// n8n's editor renders an error's message and description as HTML and keeps links.
	test.each([
		[
			'a link in a 400 message',
			{
				status: 400,
				body: { status: 'error', error: 'Bad "to": <a href="https://x.test">fix it here</a>' },
			},
			'fix it here',
		],
		[
			'an HTML error page',
			{
				status: 503,
				body: '<html><body><h1>Service Unavailable</h1><a href="//x.test">status</a></body></html>',
			},
			'Service Unavailable status',
		],
	])('server text shows as plain text, never markup: %s', async (_, fault, text) => {
		sandbox.injectFaults([{ path: '/email/send', ...fault }]);
		for (const onError of /** @type {const} */ (['continueErrorOutput', 'stopWorkflow'])) {
			const result = await runNode(sandbox, {
				parameters: sendParameters({ options: { retries: 0 } }),
				items: contacts(1),
				onError,
			});
			const { message, description } = result.errors[0]?.json.details
				? {
						message: result.errors[0].json.error,
						description: result.errors[0].json.details.description,
					}
				: result.error;
			expect(`${message} ${description}`).toContain(text);
			expect(`${message} ${description}`).not.toMatch(/[<>]/);
			sandbox.injectFaults([{ path: '/email/send', ...fault }]);
		}
	});

	test('a 5xx with an HTML body keeps the status and a short, safe excerpt', async () => {
		sandbox.injectFaults([
			{
				path: '/email/send',
				status: 503,
				body: `<html>${'x'.repeat(5000)}</html>`,
				headers: { 'content-type': 'text/html' },
			},
		]);
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		const { details } = result.errors[0].json;
		expect(details).toMatchObject({ kind: 'server_error', httpCode: 503 });
		// 300 characters of the page, the "cut" note and the sentence saying it may have been queued.
		expect(details.description.length).toBeLessThan(600);
		expect(details.description).toMatch(/cut: \d+ more characters/);
	});

	test('a 401 is not re-sent by n8n (the node handles statuses itself)', async () => {
		await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			apiKey: 'be_wrong_key',
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
	});

	test('after a 401 no further request is sent; the rest fail as not sent', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { concurrency: 1 } }),
			items: contacts(4),
			apiKey: 'be_wrong_key',
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(result.errors.map((item) => item.json.details.kind)).toEqual(
			Array(4).fill('invalid_api_key'),
		);
		expect(result.errors.slice(1).every((item) => /^Not sent/.test(item.json.error))).toBe(true);
		expectEachInputExactlyOnce(result, 4);
	});
});

describe('error kinds of Create List, Create Campaign and Send Campaign (error output)', () => {
	const operations = {
		'Create List': { path: '/list/create', parameters: createListParameters },
		'Create Campaign': { path: '/campaign/create', parameters: createCampaignParameters },
		// Unknown to the sandbox: every case below answers before the lookup.
		'Send Campaign': {
			path: '/campaign/send',
			parameters: (/** @type {any} */ overrides) =>
				sendCampaignParameters({ campaignId: '0123456789abcdef01234567', ...overrides }),
		},
	};
	/** @type {Array<[string, string, number | null, (path: string) => any]>} */
	const cases = [
		['invalid_request', 'a 400', 400, (path) => ({ fault: { path, status: 400 } })],
		['invalid_api_key', 'a 401', 401, () => ({ apiKey: 'be_wrong_key' })],
		[
			'rate_limited',
			'a 429 (published only for the daily email quota)',
			429,
			(path) => ({ fault: { path, status: 429 } }),
		],
		['server_error', 'a 502', 502, (path) => ({ fault: { path, status: 502 } })],
		[
			'unexpected_response',
			'a 404 with the spec error shape',
			404,
			(path) => ({ fault: { path, status: 404, body: { status: 'error', error: 'Not here' } } }),
		],
		['network_error', 'a timeout', null, (path) => ({ fault: { path, action: 'hang' } })],
		['network_error', 'a refused connection', null, () => ({ closed: true })],
	];

	test.each(
		Object.keys(operations).flatMap((name) =>
			cases.map(([kind, label, httpCode, arrange]) => ({ name, kind, label, httpCode, arrange })),
		),
	)(
		'$name: $label is $kind, paired, input fields kept',
		async ({ name, kind, httpCode, arrange }) => {
			const operation = operations[/** @type {keyof typeof operations} */ (name)];
			const { fault, apiKey, closed } = arrange(operation.path);
			if (fault) sandbox.injectFaults([fault]);
			const result = await runNode(sandbox, {
				parameters: {
					...operation.parameters({ options: { retries: 0 } }),
					requestOptions: { timeout: 300 },
				},
				items: [{ crmId: 'c-1' }],
				apiKey,
				baseUrl: closed ? await closedBaseUrl() : undefined,
				onError: 'continueErrorOutput',
			});
			const failed = expectOneFailedItem(result, { kind, httpCode, apiKey });
			expect(failed.json).toMatchObject({ crmId: 'c-1', error: expect.any(String) });
		},
	);
});

describe('429 in the middle of a run', () => {
	test('with concurrency 5 only requests already in flight complete after the 429', async () => {
		sandbox.setOptions({ dailyLimit: 10, latencyMs: 5 });
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { concurrency: 5 } }),
			items: contacts(40),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.state.emails).toHaveLength(10);
		// The 429 stops new launches; at most 4 others were already in flight.
		expect(sandbox.requests.length).toBeLessThanOrEqual(11 + 4);
		expect(result.success).toHaveLength(10);
		expectEachInputExactlyOnce(result, 40);
	});
});

// The spec publishes 429 only for Send Email's daily quota (with no Retry-After).
describe('a 429 that is not the daily email quota is a rate limit: waited as asked, sent again', () => {
	test.each([
		['Add Profiles', '/list/addProfiles', {}, addProfilesParameters],
		['Send Email, with a short Retry-After', '/email/send', { 'retry-after': '0' }, sendParameters],
	])('%s: the 429 is retried and the run goes on', async (_, path, headers, parameters) => {
		sandbox.injectFaults([{ path, status: 429, headers }]);
		const result = await runNode(sandbox, {
			parameters: parameters({ options: { batchSize: 2, retryWait: 1 } }),
			items: contacts(5),
			onError: 'continueErrorOutput',
		});
		expect(result.errors).toEqual([]);
		expect(sandbox.requests.filter((request) => request.path === path).length).toBeGreaterThan(1);
	});

	test('Add Profiles: a rate limit that outlasts the retries fails its batch as rate_limited; the other batches go', async () => {
		sandbox.injectFaults(Array(3).fill({ path: '/list/addProfiles', status: 429 }));
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_news',
				options: { batchSize: 2, retryWait: 1, concurrency: 1 },
			}),
			items: contacts(5),
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => item.json.details.kind)).toEqual([
			'rate_limited',
			'rate_limited',
		]);
		expect(result.errors[0].json.details.description).toMatch(/nothing was sent/);
		expect(result.success.map((item) => item.json.addedCount)).toEqual([2, 1]);
		expectEachInputExactlyOnce(result, 5);
	});
});

describe('client-side checks run before any request and spend no quota', () => {
	test.each([
		['a missing recipient', { email: '' }, /To is required/],
		[
			'a recipient that is not an address',
			{ email: 'not-an-address' },
			/To is not a valid email address/,
		],
		[
			'a recipient with a line break',
			{ email: 'jane@customer.test\r\nBcc: x@y.z' },
			/To is not a valid email address/,
		],
		[
			'a recipient that is an object',
			{ email: { nested: true } },
			/To must be text, not an object/,
		],
	])('Send Email refuses %s', async (_label, item, message) => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [item, { email: 'ok@customer.test' }],
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['ok@customer.test']);
		expect(result.errors).toHaveLength(1);
		expect(result.errors[0].json.error).toMatch(message);
		expect(result.errors[0].json.details).toEqual({
			kind: 'invalid_input',
			httpCode: null,
			description: expect.any(String),
		});
		expectEachInputExactlyOnce(result, 2);
	});

	test('Send Email refuses template variables JSON that is not an object', async () => {
		for (const json of ['[1, 2]', '"text"', '{ not json']) {
			sandbox.reset();
			const result = await runNode(sandbox, {
				parameters: sendParameters({
					content: 'template',
					templateId: 'tmpl_welcome',
					templateVariablesMode: 'json',
					templateVariablesJson: json,
				}),
				items: contacts(1),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(0);
			expect(result.errors[0].json.error).toMatch(/Variables \(JSON\)/);
		}
	});

	test('Send Email refuses an empty subject and a duplicate variable name', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				subject: '={{ $json.subject }}',
				content: 'template',
				templateId: 'tmpl_welcome',
				templateVariables: {
					variable: [
						{ name: 'firstName', value: '={{ $json.firstName }}' },
						{ name: '={{ $json.second }}', value: 'x' },
					],
				},
			}),
			items: [
				{ email: 'a@customer.test', subject: '', firstName: 'A', second: 'company' },
				{ email: 'b@customer.test', subject: 'Hi', firstName: 'B', second: 'firstName' },
				{ email: 'c@customer.test', subject: 'Hi', firstName: 'C', second: 'company' },
			],
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => item.json.error)).toEqual([
			'Subject is required',
			'Template variable "firstName" is set twice',
		]);
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['c@customer.test']);
	});

	test('Send Email refuses a Template ID of only spaces instead of sending an empty one', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ content: 'template', templateId: '={{ $json.template }}' }),
			items: [
				{ email: 'a@customer.test', template: '   ' },
				{ email: 'b@customer.test', template: ' tmpl_welcome ' },
			],
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => [item.json.error, item.pairedItem])).toEqual([
			['Template ID is required', { item: 0 }],
		]);
		expect(sandbox.requests.map((request) => request.body.templateId)).toEqual(['tmpl_welcome']);
	});
	test('Add Profiles refuses bad profile emails per item and sends the good ones', async () => {
		const items = [
			{ email: 'good1@customer.test' },
			{ email: 'bad address' },
			{ email: null },
			{ email: 'good2@customer.test' },
		];
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters(),
			items,
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests[0].body.profiles).toEqual([
			{ email: 'good1@customer.test' },
			{ email: 'good2@customer.test' },
		]);
		expect(result.errors.map((item) => [pairedIndexes(item)[0], item.json.details.kind])).toEqual([
			[1, 'invalid_input'],
			[2, 'invalid_input'],
		]);
		expect(result.success.map(pairedIndexes)).toEqual([[0, 3]]);
		expectEachInputExactlyOnce(result, 4);
	});

	test.each(['={{ "" }}', '   '])(
		'Add Profiles with a new list but no list name (%j) fails every item and sends nothing',
		async (listName) => {
			const result = await runNode(sandbox, {
				parameters: addProfilesParameters({ listName }),
				items: contacts(3),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(0);
			expect(result.errors.map((item) => item.json.error)).toEqual(
				Array(3).fill('List Name is required'),
			);
			expectEachInputExactlyOnce(result, 3);
		},
	);
});

describe('On Error: Continue (regular output)', () => {
	test('failed items stay on the main output as { error, details }, paired, in input order', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [{ email: 'bad' }, { email: 'ok@customer.test' }],
			onError: 'continueRegularOutput',
		});
		expect(result.success).toHaveLength(2);
		expect(result.success[0]).toEqual({
			json: {
				error: expect.stringMatching(/To is not a valid email address/),
				details: { kind: 'invalid_input', httpCode: null, description: expect.any(String) },
			},
			pairedItem: { item: 0 },
		});
		expect(result.success[1].json.messageId).toEqual(expect.any(String));
	});
});

describe('On Error: Stop Workflow', () => {
	test.each([
		[401, 'credential-invalid', { apiKey: 'be_wrong_key' }],
		[
			400,
			'configuration-invalid',
			{
				fault: {
					status: 400,
					body: { status: 'error', error: 'Invalid email format for field "to"' },
				},
			},
		],
		[500, 'temporarily-unavailable', { fault: { status: 500 } }],
	])('HTTP %s sets failure.cause %s', async (httpCode, cause, { apiKey, fault }) => {
		if (fault) sandbox.injectFaults([{ path: '/email/send', ...fault }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			apiKey,
		});
		expect(result.error.httpCode).toBe(String(httpCode));
		expect(result.error.failure).toEqual({ cause });
	});

	test('a client-side check throws a NodeOperationError before any request', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [{ email: 'ok@customer.test' }, { email: 'bad' }],
		});
		expect(result.error.name).toBe('NodeOperationError');
		expect(result.error.message).toMatch(/To is not a valid email address/);
		expect(result.error.context.itemIndex).toBe(1);
		expect(sandbox.requests).toHaveLength(0);
	});

	test('Add Profiles: a failed batch throws for its first item; at Concurrency 1 nothing follows it', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_missing',
				options: { batchSize: 2, concurrency: 1 },
			}),
			items: contacts(4),
		});
		expect(result.error.name).toBe('NodeApiError');
		expect(result.error.httpCode).toBe('404');
		expect(result.error.message).toMatch(/List not found/);
		expect(result.error.context.itemIndex).toBe(0);
		expect(sandbox.requests).toHaveLength(1);
	});

	test('Add Profiles: an invalid profile throws for its item before any batch is sent', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2 } }),
			items: [{ email: 'a@customer.test' }, { email: 'b@customer.test' }, { email: 'bad' }],
		});
		expect(result.error.name).toBe('NodeOperationError');
		expect(result.error.message).toMatch(/Email is not a valid email address/);
		expect(result.error.context.itemIndex).toBe(2);
		expect(sandbox.requests).toHaveLength(0);
	});

	/** A word n8n 2.x swaps a whole message for ("You can retry the request immediately ..."). */
	const SOCKET_CODE = /ECONN|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|EHOSTUNREACH|EPERM|GETADDRINFO/i;

	test.each([
		['a reset', { action: 'reset' }, 'Send Email', sendParameters(), /could not be reached/],
		[
			'a dropped answer',
			{ action: 'drop' },
			'Send Email',
			sendParameters(),
			/could not be reached/,
		],
		['a timeout', { action: 'hang' }, 'Send Email', sendParameters(), /timed out/],
		[
			'a dropped answer',
			{ action: 'drop' },
			'Send Campaign',
			sendCampaignParameters({ campaignId: 'cccccccccccccccccccccccc' }),
			/may have started sending/,
		],
	])(
		'issue 29: after %s, %s fails with its own message, no socket code that n8n would swap for stock text',
		async (_, fault, __, parameters, message) => {
			sandbox.injectFaults([/** @type {any} */ (fault)]);
			const result = await runNode(sandbox, {
				parameters: { ...parameters, requestOptions: { timeout: 300 } },
				items: [{ email: 'jane@customer.test' }],
			});
			expect(result.error.message).toMatch(/^BasicsEngage could not be reached: /);
			expect(result.error.message).toMatch(message);
			expect(result.error.message).not.toMatch(SOCKET_CODE);
			expect(result.error.message).not.toMatch(/retry the request immediately/);
		},
	);

	test('issue 29: server text holding such a word does not turn the message into stock text', async () => {
		sandbox.injectFaults([
			{
				path: '/email/send',
				status: 400,
				body: { status: 'error', error: 'EPERM: sender blocked' },
			},
		]);
		const result = await runNode(sandbox, { parameters: sendParameters(), items: contacts(1) });
		expect(result.error.message).toBe(
			'BasicsEngage rejected the request: EPERM: sender blocked. Fix it before trying again.',
		);
	});
});
