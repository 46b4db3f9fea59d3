// @ts-check
'use strict';

const {
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	pairedIndexes,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ lists: [{ listId: 'lst_news', name: 'News' }] });

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
	test('Send Email refuses template variables JSON that is not an object, per item', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				content: 'template',
				templateId: 'tmpl_welcome',
				templateVariablesMode: 'json',
				templateVariablesJson: '={{ $json.variables }}',
			}),
			items: ['[1, 2]', '"text"', '{ not json'].map((variables) => ({
				...contacts(1)[0],
				variables,
			})),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(0);
		expect(result.errors.map((item) => item.json.error)).toEqual(
			Array(3).fill(expect.stringMatching(/Variables \(JSON\)/)),
		);
	});

	test('Send Email refuses an empty subject, a duplicate variable name and a Template ID of only spaces (instead of sending an empty one), each for its item', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				subject: '={{ $json.subject }}',
				content: 'template',
				templateId: '={{ $json.template }}',
				templateVariables: {
					variable: [
						{ name: 'firstName', value: '={{ $json.firstName }}' },
						{ name: '={{ $json.second }}', value: 'x' },
					],
				},
			}),
			items: [
				{ subject: '', second: 'company' },
				{ subject: 'Hi', second: 'firstName' },
				{ subject: 'Hi', second: 'company', template: '   ' },
				{ subject: 'Hi', second: 'company' },
			].map((item, index) => ({ template: ' tmpl_welcome ', ...item, ...contacts(1, index)[0] })),
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => [item.json.error, item.pairedItem])).toEqual([
			['Subject is required', { item: 0 }],
			['Template variable "firstName" is set twice', { item: 1 }],
			['Template ID is required', { item: 2 }],
		]);
		expect(sandbox.requests.map((request) => [request.body.to, request.body.templateId])).toEqual([
			['contact3@customer.test', 'tmpl_welcome'],
		]);
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

describe('On Error: Stop Workflow', () => {
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
		['a timeout', { action: 'hang' }, 'Send Email', sendParameters(), /timed out/],
		[
			'a dropped answer',
			{ action: 'drop' },
			'Send Campaign',
			sendCampaignParameters({ campaignId: 'cccccccccccccccccccccccc' }),
			/may have started sending/,
		],
	])(
		'after %s, %s fails with its own message, holding no socket code that n8n 2.x would swap for stock text',
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

	test('server text holding such a word does not turn the message into stock text', async () => {
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
