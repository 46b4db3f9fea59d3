// @ts-check
'use strict';

/**
 * Failures of a run: rate limits, client-side checks before any request, Stop Workflow's
 * wording, a dead server the run gives up on, a stopped execution that stops the node's own
 * loops (what a later run sends after a Stop, with Skip Emails Already Sent: the model,
 * test/reliability/model.test.js).
 */

const {
	addProfilesParameters,
	contacts,
	delay,
	expectEachInputExactlyOnce,
	pairedIndexes,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({
	dailyLimit: 100_000,
	lists: [
		{ listId: 'lst_news', name: 'News' },
		{ listId: 'lst_sync', name: 'Sync' },
	],
});

// The spec publishes 429 only for Send Email's daily quota (with no Retry-After).
describe('a 429 that is not the daily email quota is a rate limit: waited as asked, sent again', () => {
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

// What test/unit/answers.test.js's waitBeforeRetry table says, at work in a run.
test('a Retry-After is honoured before the retry (a 503, Retry Send On Server Error on)', async () => {
	sandbox.injectFaults([{ path: '/email/send', status: 503, headers: { 'Retry-After': '1' } }]);
	const options = { retryWait: 10, retrySendOnServerError: true };
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options }),
		items: contacts(1),
	});
	expect(result.success).toHaveLength(1);
	const [first, second] = sandbox.requests.map((request) => Date.parse(request.receivedAt));
	expect(second - first).toBeGreaterThanOrEqual(990);
});

test('Send Email at Concurrency 5: after the daily quota is used up (429) only the requests already in flight go; every item comes out once', async () => {
	sandbox.setOptions({ dailyLimit: 10, latencyMs: 5 });
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options: { concurrency: 5 } }),
		items: contacts(40),
		onError: 'continueErrorOutput',
	});
	expect([sandbox.state.emails.length, result.success.length]).toEqual([10, 10]);
	expect(sandbox.requests.length).toBeLessThanOrEqual(11 + 4);
	expectEachInputExactlyOnce(result, 40);
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
});

describe('On Error: Stop Workflow', () => {
	test('a client-side check throws a NodeOperationError before any request', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [{ email: 'ok@customer.test' }, { email: 'bad' }],
		});
		expect(result.error?.name).toBe('NodeOperationError');
		expect(result.error?.message).toMatch(/To is not a valid email address/);
		expect(result.error?.context.itemIndex).toBe(1);
		expect(sandbox.requests).toHaveLength(0);
	});

	test('Add Profiles: an invalid profile throws for its item before any batch is sent', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2 } }),
			items: [{ email: 'a@customer.test' }, { email: 'b@customer.test' }, { email: 'bad' }],
		});
		expect(result.error?.name).toBe('NodeOperationError');
		expect(result.error?.message).toMatch(/Email is not a valid email address/);
		expect(result.error?.context.itemIndex).toBe(2);
		expect(sandbox.requests).toHaveLength(0);
	});

	test.each([
		['Send Email at Concurrency 5', sendParameters({ options: { concurrency: 5, retries: 0 } })],
		[
			'Add Profiles at the default Concurrency',
			addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_sync',
				options: { batchSize: 2, retries: 0 },
			}),
		],
	])(
		'%s: after a failure only the requests already in flight go, and the error names what they did',
		async (_, parameters) => {
			sandbox.setOptions({ latencyMs: 10 });
			sandbox.injectFaults([{ status: 500 }]);
			const result = await runNode(sandbox, { parameters, items: contacts(40) });
			expect(result.error).toMatchObject({ httpCode: '500', context: { itemIndex: 0 } });
			// At most the 4 requests in flight beside the failure went.
			expect(sandbox.requests.length).toBeGreaterThan(1);
			expect(sandbox.requests.length).toBeLessThanOrEqual(5);
			const done = sandbox.requests
				.slice(1)
				.flatMap(({ body }) => body.profiles?.map((/** @type {any} */ p) => p.email) ?? body.to)
				.map((/** @type {string} */ email) => Number(email.match(/\d+/)?.[0]));
			expect(result.error?.description).toContain(
				`in this run (item indexes): ${done.join(', ')}.`,
			);
		},
	);

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
			expect(result.error?.message).toMatch(/^BasicsEngage could not be reached: /);
			expect(result.error?.message).toMatch(message);
			expect(result.error?.message).not.toMatch(SOCKET_CODE);
			expect(result.error?.message).not.toMatch(/retry the request immediately/);
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
		expect(result.error?.message).toBe(
			'BasicsEngage rejected the request: EPERM: sender blocked. Fix it before trying again.',
		);
	});
});

/** The node's give-up threshold (GIVE_UP_AFTER in nodes/BasicsEngage/transport/send.ts). */
const GIVE_UP_AFTER = 5;

/** Every request answered with this fault. @param {Record<string, unknown>} fault */
const everyRequest = (fault) =>
	sandbox.setOptions({ faultRate: 1, randomFaults: [/** @type {any} */ (fault)] });

describe('a dead server: the run gives up after failures in a row', () => {
	// A Timeout short only where the server hangs: a loaded machine may answer a 500 late.
	test.each([
		['answers 500 to everything', { status: 500 }, 'server_error', 10_000],
		['accepts and never answers (timeout)', { action: 'hang' }, 'network_error', 200],
	])(
		`Send Email, a server that %s: ${GIVE_UP_AFTER} requests, the rest fail as not sent, safe to retry`,
		async (_, fault, kind, timeout) => {
			everyRequest(fault);
			const result = await runNode(sandbox, {
				parameters: sendParameters({
					options: { concurrency: 1, retries: 0 },
					requestOptions: { timeout },
				}),
				items: contacts(50),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(GIVE_UP_AFTER);
			expectEachInputExactlyOnce(result, 50);
			const notSent = result.errors.slice(GIVE_UP_AFTER);
			expect(notSent).toHaveLength(50 - GIVE_UP_AFTER);
			for (const item of result.errors) expect(item.json.details.kind).toBe(kind);
			expect(notSent[0].json.error).toBe(
				`Not sent: ${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`,
			);
			expect(notSent[0].json.details.description).toMatch(/was not sent, so it can be sent again/);
		},
	);

	test.each([
		[
			'Send Email at Concurrency 5',
			sendParameters({ options: { concurrency: 5, retries: 0 } }),
			200,
		],
		[
			'Add Profiles at the default Concurrency',
			addProfilesParameters({ listMode: 'existing', listId: 'lst_sync', options: { retries: 0 } }),
			2000,
		],
	])('%s launches nothing after the run gave up', async (_, parameters, count) => {
		everyRequest({ status: 500 });
		const result = await runNode(sandbox, {
			parameters,
			items: contacts(count),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests.length).toBeGreaterThanOrEqual(GIVE_UP_AFTER);
		expect(sandbox.requests.length).toBeLessThanOrEqual(GIVE_UP_AFTER + 4);
		expectEachInputExactlyOnce(result, count);
		expect(result.errors.at(-1)?.json.error).toMatch(/in a row failed/);
	});

	test('Add Profiles, 2,000 profiles against a 500 everywhere: 5 batches tried, not 20', async () => {
		everyRequest({ status: 500 });
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_sync',
				options: { retries: 2, retryWait: 1, concurrency: 1 },
			}),
			items: contacts(2000),
			onError: 'continueErrorOutput',
		});
		// Adding profiles is retried on a 5xx: three tries for each of five batches.
		expect(sandbox.requests).toHaveLength(GIVE_UP_AFTER * 3);
		expectEachInputExactlyOnce(result, 2000);
		expect(result.errors[GIVE_UP_AFTER * 100].json).toMatchObject({
			error: expect.stringMatching(/in a row failed/),
			details: { kind: 'server_error', description: expect.stringMatching(/can be sent again/) },
		});
	});

	test('a server that fails now and then is served to the end: a success resets the count', async () => {
		// Four 500s and one normal answer, ten times over: never five failures in a row.
		const round = [
			...Array(GIVE_UP_AFTER - 1).fill({ status: 500 }),
			{ action: 'delay', delayMs: 0 },
		];
		sandbox.injectFaults(Array(10).fill(round).flat());
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { concurrency: 1, retries: 0 } }),
			items: contacts(100),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(100);
		expect(result.errors).toHaveLength(40);
		expect(result.success).toHaveLength(60);
	});
});

describe('a stopped execution', () => {
	test.each([
		[
			'a retry wait ends Send Email at once, with no further request',
			sendParameters({
				options: { concurrency: 1, retries: 3, retryWait: 1500, retrySendOnServerError: true },
			}),
			[{ status: 500 }],
		],
		[
			'Request Options batching ends Add Profiles at once, with no further batch',
			addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_sync',
				options: { batchSize: 1 },
				requestOptions: { batching: { batch: { batchSize: 1, batchInterval: 1500 } } },
			}),
			[],
		],
	])('a Stop during %s', async (_, parameters, faults) => {
		sandbox.injectFaults(/** @type {any} */ (faults));
		const started = Date.now();
		await runNode(sandbox, {
			parameters,
			items: contacts(3),
			stopWhen: () => sandbox.requests.length >= 1,
		});
		expect(Date.now() - started).toBeLessThan(1500);
		// Past the 1.5 s wait: a loop still running would have sent again by now.
		await delay(2000);
		expect(sandbox.requests).toHaveLength(1);
	});
});

test('Add Profiles refuses a bad profile email for its item and sends the others; under On Error = Continue (regular output) the failed item keeps its place', async () => {
	const items = [...contacts(2), { email: 'not-an-address' }, ...contacts(1, 3)];
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_sync',
			options: { batchSize: 2 },
		}),
		items,
		onError: 'continueRegularOutput',
	});
	const sent = sandbox.requests.flatMap((request) => request.body.profiles);
	expect(sent).toEqual([0, 1, 3].map((index) => ({ email: items[index].email })));
	expect(result.success.map(pairedIndexes)).toEqual([[0, 1], [2], [3]]);
	expect(result.success[1].json.details?.kind).toBe('invalid_input');
});
