// @ts-check
'use strict';

/**
 * Self-test of the fixture runner: runWorkflowFile (./n8n.js) runs an editor export as it is,
 * and ./fixtures.js turns expect.json into matchers whose placeholders match what they say.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { runWorkflowFile } = require('./n8n');
const { runFixture, withPlaceholders } = require('./fixtures');
const { API_KEY, NODE_TYPE, PACKAGE_DIR, useSandbox } = require('../support');

const sandbox = useSandbox();

const match = (/** @type {unknown} */ value) => withPlaceholders(value, new Map());

describe('placeholders', () => {
	test('"<any ...>" match a kind of value, and "<any>" anything present', () => {
		expect({ a: 'x', b: 1, c: { d: 1 }, e: [], f: null }).toEqual(
			match({
				a: '<any string>',
				b: '<any number>',
				c: '<any object>',
				e: '<any array>',
				f: '<any>',
			}),
		);
		expect({ a: 1 }).not.toEqual(match({ a: '<any string>' }));
		expect({ a: '1' }).not.toEqual(match({ a: '<any number>' }));
		expect({ a: [] }).not.toEqual(match({ a: '<any object>' }));
		expect({}).not.toEqual(match({ a: '<any>' }));
	});

	test('"<match /regex/flags>" matches strings the regex matches', () => {
		expect({ a: 'Email QUEUED' }).toEqual(match({ a: '<match /queued/i>' }));
		expect({ a: 'application/json; charset=utf-8' }).toEqual(
			match({ a: '<match /^application/json/>' }),
		);
		expect({ a: 'Email sent' }).not.toEqual(match({ a: '<match /queued/i>' }));
		expect({ a: 42 }).not.toEqual(match({ a: '<match /42/>' }));
	});

	test('"<$name>" takes any value the first time and only that value everywhere else', () => {
		expect({ a: 'list_1', b: ['list_1'] }).toEqual(match({ a: '<$id>', b: ['<$id>'] }));
		expect({ a: 'list_1', b: ['list_2'] }).not.toEqual(match({ a: '<$id>', b: ['<$id>'] }));
		expect({ a: 'list_1', b: 'list_2' }).toEqual(match({ a: '<$one>', b: '<$two>' }));
		expect({}).not.toEqual(match({ a: '<$id>' }));
	});

	test('any other string is literal, HTML included', () => {
		expect({ a: '<p>Sale!</p>', b: '<anything>' }).toEqual(
			match({ a: '<p>Sale!</p>', b: '<anything>' }),
		);
		expect({ a: 'x' }).not.toEqual(match({ a: '<anything>' }));
	});
});

/** @param {Partial<import('n8n-workflow').INode> & { name: string, type: string }} node */
const exportedNode = (node) => ({
	parameters: {},
	typeVersion: 1,
	position: [0, 0],
	id: node.name,
	...node,
});

const sendEmail = exportedNode({
	name: 'Send Email',
	type: NODE_TYPE,
	parameters: {
		to: '={{ $json.email }}',
		from: 'hello@example.com',
		subject: 'Hi',
		content: 'text',
		text: 'Hello',
	},
	credentials: { basicsEngageApi: { id: 'id-of-another-instance', name: 'Their credential' } },
});

/** @param {Array<[string, string]>} pairs source -> target on main output 0 */
const connect = (pairs) =>
	Object.fromEntries(
		pairs.map(([source, target]) => [
			source,
			{ main: [[{ node: target, type: 'main', index: 0 }]] },
		]),
	);

const credentials = () => ({ basicsEngageApi: { apiKey: API_KEY, baseUrl: sandbox.baseUrl } });

describe('runWorkflowFile', () => {
	test('runs an export as it is: a pinned Code node feeds BasicsEngage, whose credential is bound whatever its ID, and No Operation passes the items on', async () => {
		const result = await runWorkflowFile(
			{
				nodes: [
					exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }),
					exportedNode({ name: 'Contacts', type: 'n8n-nodes-base.code', typeVersion: 2 }),
					sendEmail,
					exportedNode({ name: 'Done', type: 'n8n-nodes-base.noOp' }),
					exportedNode({ name: 'Note', type: 'n8n-nodes-base.stickyNote' }),
				],
				connections: connect([
					['Start', 'Contacts'],
					['Contacts', 'Send Email'],
					['Send Email', 'Done'],
				]),
				settings: { executionOrder: 'v1' },
				pinData: { Contacts: [{ json: { email: 'ann@customer.test' } }] },
			},
			{ packageDir: PACKAGE_DIR, credentials: credentials() },
		);
		expect(result.error).toBeUndefined();
		expect(result.executedNodes).toEqual(['Start', 'Contacts', 'Send Email', 'Done']);
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['ann@customer.test']);
		expect(result.outputs.Done).toEqual([
			[expect.objectContaining({ json: expect.objectContaining({ status: 'success' }) })],
		]);
	});

	test('pinned data given as options wins over the export and may be plain objects', async () => {
		const result = await runWorkflowFile(
			{
				nodes: [exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }), sendEmail],
				connections: connect([['Start', 'Send Email']]),
				pinData: { Start: [{ json: { email: 'old@customer.test' } }] },
			},
			{
				packageDir: PACKAGE_DIR,
				credentials: credentials(),
				pinData: { Start: [{ email: 'new@customer.test' }] },
			},
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['new@customer.test']);
	});

	test('a BasicsEngage node the export gives no credential gets the bound one', async () => {
		const { credentials: _, ...withoutCredential } = sendEmail;
		const result = await runWorkflowFile(
			{
				nodes: [
					exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }),
					withoutCredential,
				],
				connections: connect([['Start', 'Send Email']]),
			},
			{
				packageDir: PACKAGE_DIR,
				credentials: credentials(),
				pinData: { Start: [{ email: 'ann@customer.test' }] },
			},
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.requests).toHaveLength(1);
	});

	test('keeps the exported node settings (On Error, Execute Once) and passes items through a disabled node, whatever its type', async () => {
		const result = await runWorkflowFile(
			{
				nodes: [
					exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }),
					exportedNode({ name: 'Rename', type: 'n8n-nodes-base.set', disabled: true }),
					{ ...sendEmail, onError: 'continueRegularOutput', executeOnce: true },
				],
				connections: connect([
					['Start', 'Rename'],
					['Rename', 'Send Email'],
				]),
				settings: { executionOrder: 'v1' },
			},
			{
				packageDir: PACKAGE_DIR,
				credentials: credentials(),
				pinData: { Start: [{ email: 'not-an-address' }, { email: 'ann@customer.test' }] },
			},
		);
		expect(result.error).toBeUndefined();
		expect(result.executedNodes).toEqual(['Start', 'Rename', 'Send Email']);
		expect(sandbox.requests).toHaveLength(0);
		expect(result.outputs['Send Email']).toEqual([
			[
				{
					json: {
						error: expect.stringMatching(/To is not a valid email address/),
						details: { kind: 'invalid_input', httpCode: null, description: expect.any(String) },
					},
					pairedItem: { item: 0 },
				},
			],
		]);
	});

	test('refuses, before any request, a node it cannot run that has no pinned data', async () => {
		const run = runWorkflowFile(
			{
				nodes: [
					exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }),
					exportedNode({ name: 'Contacts', type: 'n8n-nodes-base.code', typeVersion: 2 }),
					sendEmail,
				],
				connections: connect([
					['Start', 'Contacts'],
					['Contacts', 'Send Email'],
				]),
			},
			{ packageDir: PACKAGE_DIR, credentials: credentials() },
		);
		await expect(run).rejects.toThrow(
			/cannot run "Contacts" \(n8n-nodes-base\.code\): pin its output/,
		);
		expect(sandbox.requests).toHaveLength(0);
	});

	test('asks which node to start from when two could, and refuses pinned data for a node it does not have', async () => {
		const nodes = [
			exportedNode({ name: 'Form', type: 'n8n-nodes-base.formTrigger' }),
			exportedNode({ name: 'Schedule', type: 'n8n-nodes-base.scheduleTrigger' }),
			sendEmail,
		];
		const connections = {
			Form: { main: [[{ node: 'Send Email', type: 'main', index: 0 }]] },
			Schedule: { main: [[{ node: 'Send Email', type: 'main', index: 0 }]] },
		};
		const pinData = {
			Form: [{ email: 'a@customer.test' }],
			Schedule: [{ email: 'b@customer.test' }],
		};
		await expect(
			runWorkflowFile(
				{ nodes, connections },
				{ packageDir: PACKAGE_DIR, credentials: credentials(), pinData },
			),
		).rejects.toThrow(/Cannot tell which node the run starts from \("Form", "Schedule"\)/);
		await expect(
			runWorkflowFile(
				{ nodes, connections },
				{ packageDir: PACKAGE_DIR, credentials: credentials(), pinData: { Webhook: [] } },
			),
		).rejects.toThrow(/pinData names node "Webhook"/);

		const result = await runWorkflowFile(
			{ nodes, connections },
			{ packageDir: PACKAGE_DIR, credentials: credentials(), pinData, startNode: 'Schedule' },
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['b@customer.test']);
	});
});

describe('runFixture', () => {
	/** @type {string} */
	let dir;
	beforeEach(() => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixture-'));
		fs.writeFileSync(
			path.join(dir, 'workflow.json'),
			JSON.stringify({
				nodes: [
					exportedNode({ name: 'Start', type: 'n8n-nodes-base.manualTrigger' }),
					sendEmail,
					exportedNode({ name: 'Done', type: 'n8n-nodes-base.noOp' }),
				],
				connections: connect([
					['Start', 'Send Email'],
					['Send Email', 'Done'],
				]),
				settings: { executionOrder: 'v1' },
			}),
		);
	});
	afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

	/** @param {Record<string, unknown>} expectation */
	const writeExpect = (expectation) =>
		fs.writeFileSync(path.join(dir, 'expect.json'), JSON.stringify(expectation));

	test('compares only the request fields and headers expect.json names; null means absent', async () => {
		writeExpect({
			pinData: { Start: [{ email: 'ann@customer.test' }] },
			requests: [
				{
					path: '/email/send',
					headers: { authorization: `Bearer ${API_KEY}`, authroization: null },
				},
			],
		});
		const { actual, expected } = await runFixture(dir);
		expect(actual).toEqual(expected);
		expect(actual.requests).toEqual([
			{ path: '/email/send', headers: { authorization: `Bearer ${API_KEY}`, authroization: null } },
		]);
	});

	test('credential.apiKey is the key of the bound credential, and it is checked for in what users see', async () => {
		writeExpect({
			credential: { apiKey: 'be_wrong_key' },
			pinData: { Start: [{ email: 'ann@customer.test' }] },
			requests: [{ headers: { authorization: 'Bearer be_wrong_key' } }],
			error: { httpCode: '401' },
		});
		const { actual, expected, apiKey, visible } = await runFixture(dir);
		expect(actual).toEqual(expected);
		expect(apiKey).toBe('be_wrong_key');
		expect(visible).not.toContain('be_wrong_key');
		expect(visible).toContain('Send Email');
	});

	test('a request, an output item, an error or a state entry more or less than expect.json says is a difference', async () => {
		const base = {
			pinData: { Start: [{ email: 'ann@customer.test' }, { email: 'bob@customer.test' }] },
		};
		for (const expectation of [
			{ requests: [{ path: '/email/send' }] },
			{ outputs: { 'Send Email': [[]] } },
			{ outputs: { 'Send Email': null } },
			{ error: { name: 'NodeApiError' } },
			{ state: { emails: [] } },
		]) {
			writeExpect({ ...base, ...expectation });
			const { actual, expected } = await runFixture(dir);
			expect(actual).not.toEqual(expected);
		}
	});

	test('an unexpected error is a difference; a node that did not run is null', async () => {
		writeExpect({
			sandbox: { faults: [{ path: '/email/send', status: 500 }] },
			pinData: { Start: [{ email: 'ann@customer.test' }] },
			outputs: { 'Send Email': [], Done: null },
		});
		const { actual, expected } = await runFixture(dir);
		expect(actual.outputs).toEqual({ 'Send Email': [], Done: null });
		expect(actual.error).toMatchObject({ node: 'Send Email', httpCode: '500' });
		expect(actual).not.toEqual(expected);
	});

	test('refuses expect.json keys it does not know, a node name the workflow does not have, and an expect.json that checks nothing', async () => {
		writeExpect({ output: {} });
		await expect(runFixture(dir)).rejects.toThrow(/unknown key output/);
		writeExpect({ requests: [{ path: '/email/send', bdy: {} }] });
		await expect(runFixture(dir)).rejects.toThrow(/requests\[0\]: unknown key bdy/);
		writeExpect({ outputs: { 'Send email': [] } });
		await expect(runFixture(dir)).rejects.toThrow(/outputs: the workflow has no node "Send email"/);
		writeExpect({ pinData: {} });
		await expect(runFixture(dir)).rejects.toThrow(/nothing to check/);
	});
});
