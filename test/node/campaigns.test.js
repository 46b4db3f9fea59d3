// @ts-check
'use strict';

const {
	API_KEY,
	createCampaignParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	pairedIndexes,
	runNode,
	sendCampaignParameters,
	useSandbox,
} = require('../support');

const SPRING = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const AUTUMN = 'bbbbbbbbbbbbbbbbbbbbbbbb';
const EMPTY = 'cccccccccccccccccccccccc';

const sandbox = useSandbox({
	lists: [
		{
			listId: 'list_spring',
			name: 'Spring',
			profiles: [{ email: 'ann@customer.test' }, { email: 'bob@customer.test' }],
		},
		{ listId: 'list_autumn', name: 'Autumn', profiles: [{ email: 'cyd@customer.test' }] },
		{ listId: 'list_empty', name: 'Empty' },
	],
	campaigns: [
		{ _id: SPRING, name: 'Spring', subject: 'Hi', recepientList: ['list_spring'] },
		{ _id: AUTUMN, name: 'Autumn', subject: 'Hi', recepientList: ['list_autumn'] },
		{ _id: EMPTY, name: 'Empty', subject: 'Hi', recepientList: ['list_empty'] },
	],
});

const createdCampaigns = () =>
	[...sandbox.state.campaigns.values()].filter(
		(campaign) => ![SPRING, AUTUMN, EMPTY].includes(campaign._id),
	);
const sends = () =>
	sandbox.state.campaignSends.map(({ campaignId, recipients }) => ({ campaignId, recipients }));

describe('Create Campaign', () => {
	test('output: name and subject are what the answer says, never the input echoed', async () => {
		// The published example answer, which does not match its own request.
		sandbox.injectFaults([
			{
				path: '/campaign/create',
				status: 200,
				body: {
					status: 'success',
					data: {
						campaign: {
							_id: '64a55f123',
							name: 'Holiday Sale',
							subject: 'Exclusive 50% Off',
							content: '<p>Happy Holidays!</p>',
						},
					},
				},
			},
			{
				path: '/campaign/create',
				status: 200,
				body: { status: 'success', data: { campaign: { _id: '64a55f124' } } },
			},
		]);
		const result = await runNode(sandbox, {
			parameters: createCampaignParameters(),
			items: [{}, {}],
		});
		expect(result.success.map((item) => item.json)).toEqual([
			{ campaignId: '64a55f123', name: 'Holiday Sale', subject: 'Exclusive 50% Off' },
			{ campaignId: '64a55f124', name: null, subject: null },
		]);
	});

	test('content: Plain Text goes out as content; an empty body sends no content field', async () => {
		await runNode(sandbox, {
			parameters: createCampaignParameters({
				contentFormat: 'text',
				campaignText: 'Hi {{name}},\nsale!',
				campaignHtml: '<p>ignored</p>',
			}),
		});
		await runNode(sandbox, { parameters: createCampaignParameters({ campaignHtml: '' }) });
		const [text, empty] = sandbox.requestsTo('/campaign/create').map((request) => request.body);
		expect(text.content).toBe('Hi {{name}},\nsale!');
		expect(empty).not.toHaveProperty('content');
		expect(empty).not.toHaveProperty('recepientList');
		expect(empty).not.toHaveProperty('recipientList');
	});

	test.each(/** @type {const} */ (['recepientList', 'recipientList', 'either']))(
		'a server that reads the list IDs from %s stores the lists',
		async (campaignListField) => {
			sandbox.setOptions({ campaignListField });
			await runNode(sandbox, {
				parameters: createCampaignParameters({ recipientListIds: 'list_spring,list_autumn' }),
			});
			expect(createdCampaigns()[0].recepientList).toEqual(['list_spring', 'list_autumn']);
		},
	);

	test('client-side checks: a blank name, no subject or list IDs that are not text fail their item only', async () => {
		const result = await runNode(sandbox, {
			parameters: createCampaignParameters({
				campaignName: '={{ $json.name }}',
				campaignSubject: '={{ $json.subject }}',
				recipientListIds: '={{ $json.lists }}',
			}),
			items: [
				{ name: ' ', subject: 's' },
				{ name: 'n', subject: '' },
				{ name: 'n', subject: 's', lists: ['list_spring', null] },
				{ name: 'n', subject: 's', lists: 7 },
				{ name: ' Kept ', subject: ' s ', lists: 'list_spring' },
			],
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => [pairedIndexes(item)[0], item.json.error])).toEqual([
			[0, 'Campaign Name is required'],
			[1, 'Subject is required'],
			[2, 'Recipient List IDs must hold only texts, but entry 2 is null'],
			[3, 'Recipient List IDs must be text or a list of texts, not a number'],
		]);
		for (const item of result.errors) expect(item.json.details.kind).toBe('invalid_input');
		expect(sandbox.requestsTo('/campaign/create').map((request) => request.body)).toEqual([
			{
				name: 'Kept',
				subject: ' s ',
				content: '<p>Sale!</p>',
				recepientList: ['list_spring'],
				recipientList: ['list_spring'],
			},
		]);
		expectEachInputExactlyOnce(result, 5);
	});

	test('errors: a 200 without campaign._id is unexpected_response, may have created it, is not retried', async () => {
		for (const data of [
			{},
			{ campaign: 'x' },
			{ campaign: { name: 'n' } },
			{ campaign: { _id: '' } },
		]) {
			sandbox.reset();
			sandbox.injectFaults([{ status: 200, body: { status: 'success', data } }]);
			const result = await runNode(sandbox, {
				parameters: createCampaignParameters({ options: { retries: 3, retryWait: 0 } }),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(1);
			expect(result.success).toEqual([]);
			expect(result.errors[0].json.details.kind).toBe('unexpected_response');
			expect(result.errors[0].json.details.description).toMatch(
				/the campaign may have been created/,
			);
		}
	});
});

describe('Send Campaign', () => {
	test('spec: POST /campaign/send with { campaignId }, the ID trimmed, and Authorization only; one send to every profile of its lists', async () => {
		const result = await runNode(sandbox, {
			parameters: sendCampaignParameters({ campaignId: ` ${SPRING} ` }),
		});
		expect(result.error).toBeUndefined();
		const [request] = sandbox.requestsTo('/campaign/send');
		expect(request.body).toEqual({ campaignId: SPRING });
		expect(request.headers).not.toHaveProperty('authroization');
		expect(sends()).toEqual([
			{ campaignId: SPRING, recipients: ['ann@customer.test', 'bob@customer.test'] },
		]);
	});

	test('the answer is not published: status "success" alone means sending started', async () => {
		sandbox.injectFaults([{ path: '/campaign/send', status: 200, body: { status: 'success' } }]);
		const result = await runNode(sandbox, {
			parameters: sendCampaignParameters({ campaignId: SPRING }),
		});
		expect(result.success.map((item) => item.json)).toEqual([
			{ campaignId: SPRING, sendingStarted: true },
		]);
	});

	test('one send at a time, in input order', async () => {
		sandbox.setOptions({ latencyMs: 15 });
		let maxInFlight = 0;
		const track = setInterval(() => {
			const inFlight = sandbox.requests.length - sandbox.state.campaignSends.length;
			maxInFlight = Math.max(maxInFlight, inFlight);
		}, 1);
		try {
			await runNode(sandbox, {
				parameters: sendCampaignParameters(),
				items: [SPRING, AUTUMN, SPRING, AUTUMN].map((campaignId) => ({ campaignId })),
			});
		} finally {
			clearInterval(track);
		}
		expect(maxInFlight).toBe(1);
		expect(sends().map((send) => send.campaignId)).toEqual([SPRING, AUTUMN, SPRING, AUTUMN]);
	});

	test('errors: a campaign without recipients (400) is invalid_request; an empty ID invalid_input', async () => {
		const result = await runNode(sandbox, {
			parameters: sendCampaignParameters(),
			items: [{ campaignId: EMPTY }, { campaignId: '' }],
			onError: 'continueErrorOutput',
		});
		expect(
			result.errors.map((item) => [
				pairedIndexes(item)[0],
				item.json.details.kind,
				item.json.details.httpCode,
				item.json.error,
			]),
		).toEqual([
			[0, 'invalid_request', 400, expect.stringMatching(/Campaign has no recipients/)],
			[1, 'invalid_input', null, 'Campaign ID is required'],
		]);
		// A refusal did not start anything, so it does not warn that it may have.
		for (const item of result.errors) expect(item.json.error).not.toMatch(/may have started/);
		expect(sends()).toEqual([]);
		expectEachInputExactlyOnce(result, 2);
	});

	// Never sent again after a request that may have reached BasicsEngage, under every fault:
	// test/reliability/model.test.js; its wording: test/node/operations.test.js.
	test('its unpublished answer is passed on: the key it echoes redacted, a huge value cut to a short excerpt', async () => {
		sandbox.injectFaults([
			{
				path: '/campaign/send',
				status: 200,
				body: {
					status: 'success',
					message: `started for ${API_KEY}`,
					data: { debug: { authorization: `Bearer ${API_KEY}` }, blob: 'x'.repeat(1_000_000) },
				},
			},
		]);
		const result = await runNode(sandbox, {
			parameters: sendCampaignParameters({ campaignId: SPRING }),
		});
		const { data, ...json } = result.success[0].json;
		expect(json).toEqual({
			campaignId: SPRING,
			sendingStarted: true,
			message: 'started for [redacted]',
		});
		expect(typeof data).toBe('string');
		expect(String(data).length).toBeLessThan(2100);
		expect(String(data)).toMatch(/cut: \d+ more characters/);
		expectNoSecret(result, API_KEY);
	});
});
