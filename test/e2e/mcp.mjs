// The MCP server example (examples/mcp-server.json) published in a real n8n: its MCP Server
// Trigger with two BasicsEngage tools (Send Email, Add Profiles), and the official MCP client
// (@modelcontextprotocol/sdk) at its production URL over Streamable HTTP, as any MCP client.
import {
	DEMO_API_KEY,
	NEWSLETTER_LIST,
	mcpUrl,
	readExamples,
	waitForMcp,
} from '../../dev/n8n-setup.mjs';
import { listExecutionsSince } from './executions.mjs';
import { env } from './shared.mjs';
import { connectMcp, exampleVariant, importWorkflow, until } from './helpers.mjs';

const MCP = 'beExampleMcp0001';
const SEND = 'Send_Email';
const ADD = 'Add_Profiles';
const JANE = {
	to: 'jane@customer.test',
	subject: 'Your order shipped',
	body: 'Hi Jane, it is on its way.',
};

/** MCP clients by workflow: the example (On Error: Stop) and two variants with Continue. */
const clients = {};
const workflowIds = [MCP];
const VARIANTS = {
	continueRegularOutput: { id: 'beExampleMcpCReg', triggerPath: 'basicsengage-continue-regular' },
	continueErrorOutput: { id: 'beExampleMcpCErr', triggerPath: 'basicsengage-continue-error' },
};

beforeAll(async () => {
	const example = readExamples().find((e) => e.id === MCP);
	clients.stop = await connectMcp(mcpUrl(env.n8n.url, example.mcpPath));
	// The example with Send Email's On Error set to a Continue mode, as its own published workflow.
	for (const [onError, variant] of Object.entries(VARIANTS)) {
		const { workflow, node } = exampleVariant(MCP, { ...variant, label: `On Error: ${onError}` });
		node('Send Email').onError = onError;
		await importWorkflow(env, workflow);
		workflowIds.push(workflow.id);
		const url = mcpUrl(env.n8n.url, variant.triggerPath);
		await waitForMcp(url);
		clients[onError] = await connectMcp(url);
	}
}, 300_000);

afterAll(async () => {
	for (const client of Object.values(clients)) await client.close();
}, 60_000);

/** Calls a tool; returns what the model would read: isError and the text (and its JSON, if any). */
async function callTool(name, args, { client = clients.stop.client } = {}) {
	const result = await client.callTool({ name, arguments: args });
	expect(result.content).toHaveLength(1);
	expect(result.content[0].type).toBe('text');
	const { text } = result.content[0];
	const json = /^[[{]/.test(text) ? JSON.parse(text) : undefined;
	return { isError: result.isError === true, text, json };
}

const requestsTo = (p) => env.sandbox.requests.filter((r) => r.path === p);

/**
 * Waits until n8n has finished every execution of the workflows (a tool call also starts one, to
 * record the call), then a little longer: whatever n8n would still send has been sent.
 */
async function settled() {
	const all = async () =>
		(await Promise.all(workflowIds.map((id) => listExecutionsSince(env.rest, id)))).flat();
	const done = async () => !(await all()).some((e) => ['new', 'running'].includes(e.status));
	await until(done, 'executions still running');
	await new Promise((r) => setTimeout(r, 500));
}

describe('the published example: an MCP server with two BasicsEngage tools', () => {
	test("tools/list: Send Email and Add Profiles, with the example's descriptions and their input schemas", async () => {
		const { tools } = await clients.stop.client.listTools();
		const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
		const { nodes } = readExamples().find((e) => e.id === MCP).workflow;
		const described = nodes.map((n) => [n.name.replace(' ', '_'), n.parameters.toolDescription]);
		expect(tools.map((t) => [t.name, t.description]).sort()).toEqual(
			described.filter(([, description]) => description).sort(),
		);
		const send = byName[SEND];
		expect(send.inputSchema).toMatchObject({
			type: 'object',
			properties: {
				to: { type: 'string', description: expect.stringMatching(/recipient/) },
				subject: { type: 'string', description: expect.any(String) },
				body: { type: 'string', description: expect.any(String) },
			},
		});
		expect(Object.keys(send.inputSchema.properties).sort()).toEqual(['body', 'subject', 'to']);
		expect([...send.inputSchema.required].sort()).toEqual(['body', 'subject', 'to']);

		expect(byName[ADD].inputSchema).toMatchObject({
			type: 'object',
			properties: {
				email: { type: 'string', description: expect.any(String) },
				firstName: { type: 'string', default: '' },
				lastName: { type: 'string', default: '' },
			},
			required: ['email'],
		});
	});

	test('Send Email queues exactly one email with the values the client passed; answers messageId and quota left', async () => {
		const result = await callTool(SEND, JANE);
		expect(result.isError).toBe(false);
		await settled();

		expect(env.sandbox.state.emails).toHaveLength(1);
		const [email] = env.sandbox.state.emails;
		expect(requestsTo('/email/send').map((r) => r.body)).toEqual([
			{ to: JANE.to, from: 'hello@example.com', subject: JANE.subject, text: JANE.body },
		]);
		expect(result.json).toEqual([
			{
				status: 'success',
				message: 'Email queued successfully',
				messageId: email.messageId,
				dailyEmailCount: 1,
				dailyEmailLimit: expect.any(Number),
				dailyEmailsRemaining: expect.any(Number),
			},
		]);
		expect(result.json[0].dailyEmailsRemaining).toBe(result.json[0].dailyEmailLimit - 1);
		expect(result.text).not.toContain(DEMO_API_KEY);
	});

	test('Add Profiles adds the contact the client passed (names optional); answers listId and counts', async () => {
		const sam = await callTool(ADD, {
			email: 'sam@customer.test',
			firstName: 'Sam',
			lastName: 'Lee',
		});
		const max = await callTool(ADD, { email: 'max@customer.test' });
		await settled();

		for (const result of [sam, max]) {
			expect(result.isError).toBe(false);
			expect(result.json).toEqual([
				{ listId: NEWSLETTER_LIST.listId, addedCount: 1, submittedCount: 1, listCreated: false },
			]);
		}
		expect(requestsTo('/list/addProfiles').map((r) => r.body)).toEqual([
			{
				listId: NEWSLETTER_LIST.listId,
				profiles: [{ email: 'sam@customer.test', firstName: 'Sam', lastName: 'Lee' }],
			},
			{ listId: NEWSLETTER_LIST.listId, profiles: [{ email: 'max@customer.test' }] },
		]);
		expect([...env.sandbox.state.lists.get(NEWSLETTER_LIST.listId).profiles.keys()]).toEqual([
			'sam@customer.test',
			'max@customer.test',
		]);
	});

	test('nothing is sent twice: each call is one request, also once n8n has recorded the calls', async () => {
		const before = await listExecutionsSince(env.rest, MCP);
		const calls = [
			[SEND, JANE],
			[ADD, { email: 'ada@customer.test', firstName: 'Ada' }],
			[SEND, { ...JANE, to: 'sam@customer.test' }],
			[SEND, { ...JANE, to: 'sam@customer.test' }], // the model asks twice: two emails
		];
		for (const [name, args] of calls) expect((await callTool(name, args)).isError).toBe(false);
		await settled();
		expect(
			env.sandbox.requests.map((r) => [r.path, r.body.to ?? r.body.profiles[0].email]),
		).toEqual([
			['/email/send', 'jane@customer.test'],
			['/list/addProfiles', 'ada@customer.test'],
			['/email/send', 'sam@customer.test'],
			['/email/send', 'sam@customer.test'],
		]);
		expect(env.sandbox.state.emails).toHaveLength(3);
		// n8n records each tool call as an execution of the workflow (which sends nothing itself)
		const after = await listExecutionsSince(env.rest, MCP);
		expect(after.length - before.length).toBe(calls.length);
	});
});

// [the failure, how the sandbox answers, the arguments' change, its kind, what it says, requests]
const FAILURES = [
	[
		'an invalid recipient',
		() => {},
		{ to: 'not-an-address' },
		'invalid_input',
		/To is not a valid email address: "not-an-address"/,
		0,
	],
	[
		'daily quota used up (429)',
		() => env.sandbox.setOptions({ dailyLimit: 0 }),
		{},
		'quota_exceeded',
		/quota.*Do not try again today/is,
		1,
	],
	// the sandbox refuses the credential's key (until its reset)
	[
		'bad API key (401)',
		() => env.sandbox.setOptions({ apiKeys: ['be_another_key'] }),
		{},
		'invalid_api_key',
		/Do not try again/,
		1,
	],
];

test.each(FAILURES)(
	'On Error = Stop (the example): %s is a tool error of its kind, saying what to do, without the key',
	async (_, fail, args, kind, says, requests) => {
		fail();
		const result = await callTool(SEND, { ...JANE, ...args });
		await settled();
		expect(result.isError).toBe(true);
		// what the model reads: `<ErrorName>: <message>\n\nDetails: <description> (kind: <kind>)`
		expect(result.text).toMatch(/^\w*Error: \S/);
		expect(result.text).toContain(`(kind: ${kind})`);
		expect(result.text).toMatch(says);
		expect(result.text).not.toMatch(new RegExp(`${DEMO_API_KEY}|Bearer`, 'i'));
		expect(requestsTo('/email/send')).toHaveLength(requests);
		expect(env.sandbox.state.emails).toHaveLength(0);
	},
);

test.each(
	Object.keys(VARIANTS).flatMap((onError) => FAILURES.slice(0, 2).map((row) => [onError, ...row])),
)(
	'On Error = %s: %s is no tool error: the answer is the error item, with its kind and no key',
	async (onError, _, fail, args, kind, says, requests) => {
		fail();
		const { client } = clients[onError];
		const result = await callTool(SEND, { ...JANE, ...args }, { client });
		await settled();
		expect(result.isError).toBe(false);
		expect(result.json).toEqual([
			{ error: expect.any(String), details: expect.objectContaining({ kind }) },
		]);
		expect(`${result.json[0].error} ${result.json[0].details.description}`).toMatch(says);
		expect(result.text).not.toContain(DEMO_API_KEY);
		expect(requestsTo('/email/send')).toHaveLength(requests);
	},
);
