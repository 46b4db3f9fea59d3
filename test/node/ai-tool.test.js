// @ts-check
'use strict';

/**
 * The node as an AI tool (AI Agent, MCP Server Trigger, a queue-mode worker's tool call): n8n
 * calls `nodeType.execute` with the model's arguments as the one input item (n8n-core's
 * makeHandleToolInvocation). A harness agent node asks n8n-core for its tools exactly as an AI
 * Agent does, and invokes them. Each operation must behave as in a normal run: same requests,
 * same output, same errors.
 */

const {
	API_KEY,
	addProfilesParameters,
	createCampaignParameters,
	createListParameters,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const CAMPAIGN_ID = 'eeeeeeeeeeeeeeeeeeeeeeee';

const sandbox = useSandbox({
	lists: [
		{ listId: 'lst_vip', name: 'VIP' },
		{ listId: 'lst_news', name: 'News', profiles: [{ email: 'ann@customer.test' }] },
	],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'News', subject: 'Hi', recepientList: ['lst_news'] }],
});

/** Send Email with the fields a model fills through $fromAI. */
const sendByModel = sendParameters({
	to: "={{ $fromAI('to', 'Email address of the recipient', 'string') }}",
	subject: "={{ $fromAI('subject', 'Subject line', 'string') }}",
	text: "={{ $fromAI('body', 'Plain text body of the email', 'string') }}",
});
const modelArgs = { to: 'jane@customer.test', subject: 'Your order shipped', body: 'Hi Jane!' };

/** @param {any} result */
function requestsOf(result) {
	return sandbox.requests.map((request) => ({ path: request.path, body: request.body }));
}

test('AI tool: Send Email queues exactly one email with the values the model passed: the request and the answer of a normal run', async () => {
	const asTool = await runNode(sandbox, { parameters: sendByModel, toolCalls: [modelArgs] });
	expect(asTool.toolAnswers.map((answer) => answer.thrown)).toEqual([undefined]);
	const toolRequests = requestsOf(asTool);
	expect(toolRequests).toEqual([
		{
			path: '/email/send',
			body: expect.objectContaining({
				to: 'jane@customer.test',
				subject: 'Your order shipped',
				text: 'Hi Jane!',
			}),
		},
	]);
	// The model gets the operation's normal output: the messageId and the quota left.
	const [answer] = JSON.parse(asTool.toolAnswers[0].answer);
	expect(answer.messageId).toBe(sandbox.state.emails[0].messageId);
	expect(JSON.stringify(asTool.toolAnswers)).not.toContain(API_KEY);
	sandbox.reset();
	const normal = await runNode(sandbox, {
		parameters: sendParameters({
			to: '={{ $json.to }}',
			subject: '={{ $json.subject }}',
			text: '={{ $json.body }}',
		}),
		items: [modelArgs],
	});
	expect(requestsOf(normal)).toEqual(toolRequests);
	const strip = (/** @type {any} */ output) => ({ ...output, messageId: 'id' });
	expect(JSON.parse(asTool.toolAnswers[0].answer).map(strip)).toEqual(
		normal.success.map((item) => strip(item.json)),
	);
});

test('AI tool: Add Profiles adds the profile the model passed and answers with listId and counts', async () => {
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_vip',
			email: "={{ $fromAI('email', 'Email address of the contact', 'string') }}",
			additionalFields: { firstName: "={{ $fromAI('firstName', 'First name', 'string') }}" },
		}),
		toolCalls: [{ email: 'sam@customer.test', firstName: 'Sam' }],
	});
	expect(result.toolAnswers[0].thrown).toBeUndefined();
	expect(JSON.parse(result.toolAnswers[0].answer)).toEqual([
		{ listId: 'lst_vip', addedCount: 1, submittedCount: 1, listCreated: false },
	]);
	expect(sandbox.requests.map((request) => request.body)).toEqual([
		{ listId: 'lst_vip', profiles: [{ email: 'sam@customer.test', firstName: 'Sam' }] },
	]);
});

/** What n8n 2.x's AI Agent hands the model of a failed tool: the error's message alone. */
const messageAlone = (/** @type {string} */ thrown) => thrown.split('\n\nDetails: ')[0];

test.each([
	[
		'an invalid recipient',
		'invalid_input',
		{ args: { to: 'not-an-address' } },
		/Fix it before trying again\.$/,
		0,
	],
	[
		'a 429',
		'quota_exceeded',
		{ arrange: () => sandbox.setOptions({ dailyLimit: 0 }) },
		/Do not try again today\.$/,
		1,
	],
	[
		'a 401',
		'invalid_api_key',
		{ apiKey: 'be_wrong_key' },
		/Do not try again until the API key is fixed\.$/,
		1,
	],
])(
	'AI tool, On Error = Stop: after %s the call is a tool error with its kind (%s) and no key, and the message alone (all n8n 2.x hands the model) says what to do',
	async (_, kind, { arrange, apiKey, args }, step, requests) => {
		arrange?.();
		const result = await runNode(sandbox, {
			parameters: sendByModel,
			toolCalls: [{ ...modelArgs, ...args }],
			apiKey,
		});
		const { thrown, answer } = result.toolAnswers[0];
		expect(answer).toBeUndefined();
		expect(thrown).toMatch(`kind: ${kind}`);
		expect(thrown).not.toContain(apiKey ?? API_KEY);
		expect(messageAlone(thrown)).toMatch(step);
		// Not the server's own advice, which a model would follow ("try again tomorrow").
		expect(messageAlone(thrown)).not.toMatch(/tomorrow|retry later/i);
		expect(sandbox.requests).toHaveLength(requests);
	},
);

test.each(['continueRegularOutput', 'continueErrorOutput'])(
	'AI tool, On Error = %s: the failure is the answer JSON, with its kind',
	async (onError) => {
		sandbox.setOptions({ dailyLimit: 0 });
		const result = await runNode(sandbox, {
			parameters: sendByModel,
			toolCalls: [modelArgs],
			onError: /** @type {any} */ (onError),
		});
		expect(result.toolAnswers[0].thrown).toBeUndefined();
		const [answer] = JSON.parse(result.toolAnswers[0].answer);
		expect(answer.details.kind).toBe('quota_exceeded');
		expect(answer.error).toMatch(/quota/i);
		expect(JSON.stringify(answer)).not.toContain(API_KEY);
	},
);

test('AI tool: two calls are two emails, each sent once', async () => {
	const result = await runNode(sandbox, {
		parameters: sendByModel,
		toolCalls: [modelArgs, { ...modelArgs, to: 'sam@customer.test' }],
	});
	expect(result.toolAnswers.map((answer) => answer.thrown)).toEqual([undefined, undefined]);
	expect(sandbox.state.emails.map((email) => email.to)).toEqual([
		'jane@customer.test',
		'sam@customer.test',
	]);
});

/** Send Campaign with the campaign ID a model fills through $fromAI. */
const sendCampaignByModel = sendCampaignParameters({
	campaignId: "={{ $fromAI('campaignId', 'ID of the campaign to send', 'string') }}",
});

test('AI tool: Create List creates the list the model named and answers with its listId', async () => {
	const result = await runNode(sandbox, {
		parameters: createListParameters({
			listName: "={{ $fromAI('listName', 'Name of the new list', 'string') }}",
			listDescription: "={{ $fromAI('listDescription', 'What the list is for', 'string') }}",
		}),
		toolCalls: [{ listName: 'Churn risk', listDescription: 'No order in 6 months' }],
	});
	expect(result.toolAnswers[0].thrown).toBeUndefined();
	const created = [...sandbox.state.lists.values()].find((list) => list.name === 'Churn risk');
	expect(created?.description).toBe('No order in 6 months');
	expect(JSON.parse(result.toolAnswers[0].answer)).toEqual([{ listId: created?.listId }]);
});

test('AI tool: Create Campaign answers with the campaignId that Send Campaign then sends', async () => {
	const created = await runNode(sandbox, {
		parameters: createCampaignParameters({
			campaignName: "={{ $fromAI('name', 'Campaign name', 'string') }}",
			campaignSubject: "={{ $fromAI('subject', 'Subject line', 'string') }}",
			campaignHtml: "={{ $fromAI('html', 'HTML content', 'string') }}",
			recipientListIds: "={{ $fromAI('listIds', 'Comma-separated list IDs', 'string') }}",
		}),
		toolCalls: [
			{ name: 'Win-back', subject: 'We miss you', html: '<p>Hi</p>', listIds: 'lst_news' },
		],
	});
	expect(created.toolAnswers[0].thrown).toBeUndefined();
	const [campaign] = JSON.parse(created.toolAnswers[0].answer);
	expect(campaign).toEqual({
		campaignId: expect.stringMatching(/^[0-9a-f]{24}$/),
		name: 'Win-back',
		subject: 'We miss you',
	});

	const sent = await runNode(sandbox, {
		parameters: sendCampaignByModel,
		toolCalls: [{ campaignId: campaign.campaignId }],
	});
	expect(sent.toolAnswers[0].thrown).toBeUndefined();
	expect(JSON.parse(sent.toolAnswers[0].answer)).toEqual([
		expect.objectContaining({ campaignId: campaign.campaignId, sendingStarted: true }),
	]);
	expect(sandbox.state.campaignSends.map((send) => send.recipients)).toEqual([
		['ann@customer.test'],
	]);
});

test("AI tool: Send Campaign's description tells the model it mails every profile of the campaign's lists", async () => {
	const result = await runNode(sandbox, {
		parameters: sendCampaignByModel,
		toolCalls: [{ campaignId: CAMPAIGN_ID }],
	});
	expect(result.toolAnswers[0].toolDescription).toMatch(
		/^Send a campaign to every profile of its lists/,
	);
	expect(sandbox.state.campaignSends).toHaveLength(1);
});

test('AI tool, On Error = Stop: an unknown campaign is a tool error with its kind; nothing sent', async () => {
	const result = await runNode(sandbox, {
		parameters: sendCampaignByModel,
		toolCalls: [{ campaignId: '000000000000000000000000' }],
	});
	expect(result.toolAnswers[0].thrown).toMatch(/Campaign not found/);
	expect(result.toolAnswers[0].thrown).toMatch(/kind: unexpected_response/);
	expect(sandbox.state.campaignSends).toEqual([]);
});

test('AI tool: a Send Campaign whose answer was lost warns the model not to send it again', async () => {
	sandbox.injectFaults([{ path: '/campaign/send', action: 'drop' }]);
	const result = await runNode(sandbox, {
		parameters: sendCampaignByModel,
		toolCalls: [{ campaignId: CAMPAIGN_ID }, { campaignId: CAMPAIGN_ID }],
	});
	for (const answer of result.toolAnswers) {
		expect(answer.thrown).toMatch(/may have started sending/);
		expect(answer.thrown).toMatch(/Do not send this campaign again/);
	}
	// The model's second call with the same campaign is answered from the first, not sent.
	expect(sandbox.requests).toHaveLength(1);
	expect(sandbox.state.campaignSends).toHaveLength(1);
});
