// @ts-check
'use strict';

/**
 * The node as an AI tool: a harness agent asks n8n-core for its tools as an AI Agent does and
 * calls them (n8n-core's makeHandleToolInvocation runs `execute` with the model's arguments as
 * the one item). Each operation behaves as in a normal run: same requests, output and errors.
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

/** A field a model fills as a tool, and the same field from the item in a normal run. */
const fromModel = (/** @type {string} */ name) =>
	`={{ $fromAI('${name}', 'The ${name}', 'string') }}`;
const fromItem = (/** @type {string} */ name) => `={{ $json.${name} }}`;
/** The requests the sandbox got: path and body. */
const requestsOf = () =>
	sandbox.requests.map((request) => ({ path: request.path, body: request.body }));
/** Output with the IDs BasicsEngage makes up set aside: they differ from run to run. */
const withoutIds = (/** @type {unknown} */ output) =>
	JSON.parse(
		JSON.stringify(output).replace(/"(messageId|listId|campaignId)":"[^"]*"/g, '"$1":"id"'),
	);

/** Each operation: its parameters with the fields a model fills, and the model's arguments. */
const TOOLS = {
	'Send Email': {
		parameters: (/** @type {typeof fromItem} */ fill) =>
			sendParameters({ to: fill('to'), subject: fill('subject'), text: fill('body') }),
		args: { to: 'jane@customer.test', subject: 'Your order shipped', body: 'Hi Jane!' },
	},
	'Add Profiles': {
		parameters: (/** @type {typeof fromItem} */ fill) =>
			addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_vip',
				email: fill('email'),
				additionalFields: { firstName: fill('firstName') },
			}),
		args: { email: 'sam@customer.test', firstName: 'Sam' },
	},
	'Create List': {
		parameters: (/** @type {typeof fromItem} */ fill) =>
			createListParameters({
				listName: fill('listName'),
				listDescription: fill('listDescription'),
			}),
		args: { listName: 'Churn risk', listDescription: 'No order in 6 months' },
	},
	'Create Campaign': {
		parameters: (/** @type {typeof fromItem} */ fill) =>
			createCampaignParameters({
				campaignName: fill('name'),
				campaignSubject: fill('subject'),
				campaignHtml: fill('html'),
				recipientListIds: fill('listIds'),
			}),
		args: { name: 'Win-back', subject: 'We miss you', html: '<p>Hi</p>', listIds: 'lst_news' },
	},
	'Send Campaign': {
		parameters: (/** @type {typeof fromItem} */ fill) =>
			sendCampaignParameters({ campaignId: fill('campaignId') }),
		args: { campaignId: CAMPAIGN_ID },
	},
};

test.each(Object.keys(TOOLS))(
	'AI tool: %s sends once the request a normal run sends, with the values the model passed, and answers with the normal output',
	async (name) => {
		const { parameters, args } = TOOLS[/** @type {keyof typeof TOOLS} */ (name)];
		const asTool = await runNode(sandbox, { parameters: parameters(fromModel), toolCalls: [args] });
		expect(asTool.toolAnswers[0].thrown).toBeUndefined();
		expect(JSON.stringify(asTool.toolAnswers)).not.toContain(API_KEY);
		const toolRequests = requestsOf();
		expect(toolRequests).toHaveLength(1);
		for (const value of Object.values(args)) expect(JSON.stringify(toolRequests)).toContain(value);
		sandbox.reset();
		const normal = await runNode(sandbox, { parameters: parameters(fromItem), items: [args] });
		expect(requestsOf()).toEqual(toolRequests);
		expect(withoutIds(JSON.parse(String(asTool.toolAnswers[0].answer)))).toEqual(
			withoutIds(normal.success.map((item) => item.json)),
		);
	},
);

/** Send Email with the fields a model fills through $fromAI. */
const sendByModel = TOOLS['Send Email'].parameters(fromModel);
const modelArgs = TOOLS['Send Email'].args;

/** Send Campaign with the campaign ID a model fills through $fromAI. */
const sendCampaignByModel = TOOLS['Send Campaign'].parameters(fromModel);

/** What n8n 2.x's AI Agent hands the model of a failed tool: the error's message alone. */
const messageAlone = (/** @type {string | undefined} */ thrown) =>
	String(thrown).split('\n\nDetails: ')[0];

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
	[
		'Send Campaign of an unknown campaign',
		'unexpected_response',
		{ parameters: sendCampaignByModel, args: { campaignId: '000000000000000000000000' } },
		/Campaign not found$/,
		1,
	],
])(
	'AI tool, On Error = Stop: after %s the call is a tool error with its kind (%s) and no key, and the message alone (all n8n 2.x hands the model) says what to do',
	/** @param {string} _ @param {string} kind @param {{ arrange?: () => void, apiKey?: string, args?: object, parameters?: import('n8n-workflow').INodeParameters }} setup */
	async (_, kind, { arrange, apiKey, args, parameters = sendByModel }, step, requests) => {
		arrange?.();
		const result = await runNode(sandbox, {
			parameters,
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
		const [answer] = JSON.parse(String(result.toolAnswers[0].answer));
		expect(answer.details.kind).toBe('quota_exceeded');
		expect(answer.error).toMatch(/quota/i);
		expect(JSON.stringify(answer)).not.toContain(API_KEY);
	},
);

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
