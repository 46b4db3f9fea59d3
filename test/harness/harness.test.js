'use strict';

/**
 * Self-test of the n8n harness: builds a throw-away community package in a
 * temp dir, serves a fake API on 127.0.0.1 and runs the fixture node through
 * n8n-core's real engine.
 */

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { loadPackage, runWorkflow, testCredential, getLogs, clearLogs } = require('./n8n');
const { engine } = require('./resolve');

/**
 * n8n 1.x differs from 2.x in ways these self-tests pin down (see
 * ./engine-differences.test.js for the details and the code references):
 * its error output only takes json keys exactly [error] or [error, message],
 * and its n8n-workflow drops an Error `cause` from NodeApiError, so the
 * credential tester's responseCode rules and status texts never apply.
 */
const V1 = engine.major === 1;

const PACKAGE_NAME = 'n8n-nodes-harness-fixture';
const NODE_TYPE = `${PACKAGE_NAME}.fixture`;
const API_KEY = 'sk-fixture-0123456789-secret';

const CREDENTIAL_SOURCE = `
'use strict';
class FixtureApi {
	constructor() {
		this.name = 'fixtureApi';
		this.displayName = 'Fixture API';
		this.documentationUrl = 'https://example.invalid/docs';
		this.properties = [
			{ displayName: 'API Key', name: 'apiKey', type: 'string', typeOptions: { password: true }, default: '' },
			{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: 'https://api.example.invalid' },
		];
		this.authenticate = {
			type: 'generic',
			properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } },
		};
		this.test = {
			request: { baseURL: '={{$credentials.baseUrl}}', url: '/me', method: 'GET' },
			rules: [{ type: 'responseCode', properties: { value: 401, message: 'Invalid API key' } }],
		};
	}
}
exports.FixtureApi = FixtureApi;
`;

const NODE_SOURCE = `
'use strict';
const { NodeApiError, NodeOperationError } = require('n8n-workflow');

async function doThing() {
	const items = this.getInputData();
	const credentials = await this.getCredentials('fixtureApi');
	const returnData = [];
	for (let i = 0; i < items.length; i++) {
		const email = this.getNodeParameter('email', i);
		const failMode = this.getNodeParameter('failMode', i);
		const errorShape = this.getNodeParameter('errorShape', i);
		try {
			if (failMode === 'throw' || failMode === 'catch') {
				throw new NodeOperationError(this.getNode(), 'Fixture exploded on purpose', { itemIndex: i });
			}
			const response = await this.helpers.httpRequestWithAuthentication.call(this, 'fixtureApi', {
				method: 'POST',
				url: String(credentials.baseUrl).replace(/\\/$/, '') + '/contacts',
				body: { email },
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: failMode !== 'strict',
			});
			if (response.statusCode >= 500) {
				throw new NodeApiError(this.getNode(), { message: 'Server error', httpCode: String(response.statusCode) }, { itemIndex: i });
			}
			if (response.statusCode >= 400) {
				const details = { statusCode: response.statusCode, body: response.body };
				const message = 'API rejected ' + email;
				if (errorShape === 'itemError') {
					returnData.push({
						json: { email },
						error: new NodeOperationError(this.getNode(), message, { itemIndex: i }),
						pairedItem: { item: i },
					});
				} else if (errorShape === 'extraKey') {
					returnData.push({ json: { error: message, details, code: 'E_REJECTED' }, pairedItem: { item: i } });
				} else {
					returnData.push({ json: { error: message, details }, pairedItem: { item: i } });
				}
			} else {
				returnData.push({ json: response.body, pairedItem: { item: i } });
			}
		} catch (error) {
			if (failMode === 'catch' && this.continueOnFail()) {
				returnData.push({ json: { error: error.message }, pairedItem: { item: i } });
				continue;
			}
			throw error;
		}
	}
	return [returnData];
}

const show = { resource: ['thing'], operation: ['do'] };

class Fixture {
	constructor() {
		this.description = {
			displayName: 'Fixture',
			name: 'fixture',
			group: ['transform'],
			version: 1,
			subtitle: '={{$parameter["operation"]}}',
			description: 'Harness fixture node',
			defaults: { name: 'Fixture' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'fixtureApi', required: true }],
			requestDefaults: {
				baseURL: '={{$credentials.baseUrl}}',
				headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
			},
			properties: [
				{
					displayName: 'Resource',
					name: 'resource',
					type: 'options',
					noDataExpression: true,
					options: [{ name: 'Thing', value: 'thing' }],
					default: 'thing',
				},
				{
					displayName: 'Operation',
					name: 'operation',
					type: 'options',
					noDataExpression: true,
					displayOptions: { show: { resource: ['thing'] } },
					options: [
						{ name: 'Do', value: 'do', action: 'Do a thing' },
						{
							name: 'Get',
							value: 'get',
							action: 'Get a thing',
							routing: { request: { method: 'GET', url: '=/contacts/{{$parameter.contactId}}' } },
						},
					],
					default: 'do',
				},
				{
					displayName: 'Contact ID',
					name: 'contactId',
					type: 'string',
					displayOptions: { show: { resource: ['thing'], operation: ['get'] } },
					default: '',
				},
				{
					displayName: 'Email',
					name: 'email',
					type: 'string',
					required: true,
					displayOptions: { show },
					default: '',
				},
				{
					displayName: 'Fail Mode',
					name: 'failMode',
					type: 'options',
					displayOptions: { show },
					options: [
						{ name: 'None (Ignore HTTP Status Errors)', value: 'none' },
						{ name: 'Throw Before Request', value: 'throw' },
						{ name: 'Throw, Caught via continueOnFail', value: 'catch' },
						{ name: 'Strict (HTTP Errors Throw)', value: 'strict' },
					],
					default: 'none',
				},
				{
					displayName: 'Error Shape',
					name: 'errorShape',
					type: 'options',
					displayOptions: { show },
					options: [
						{ name: '{ Error, Details }', value: 'details' },
						{ name: 'Item.error', value: 'itemError' },
						{ name: '{ Error, Details, Code }', value: 'extraKey' },
					],
					default: 'details',
				},
			],
		};
		this.customOperations = { thing: { do: doThing } };
	}
}
exports.Fixture = Fixture;
`;

/** Write the fixture package to a fresh temp dir and return its path. */
function buildFixturePackage() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-fixture-'));
	const write = (/** @type {string} */ rel, /** @type {string} */ content) => {
		fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
		fs.writeFileSync(path.join(dir, rel), content);
	};
	write(
		'package.json',
		JSON.stringify(
			{
				name: PACKAGE_NAME,
				version: '0.0.1',
				main: 'index.js',
				n8n: {
					n8nNodesApiVersion: 1,
					strict: true,
					credentials: ['dist/credentials/FixtureApi.credentials.js'],
					nodes: ['dist/nodes/Fixture/Fixture.node.js'],
				},
			},
			null,
			2,
		),
	);
	write('dist/credentials/FixtureApi.credentials.js', CREDENTIAL_SOURCE);
	write('dist/nodes/Fixture/Fixture.node.js', NODE_SOURCE);
	// The fixture lives outside the repo, so give it the engine's n8n-workflow
	// (same realpath => same module instance as the engine uses).
	fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
	fs.symlinkSync(
		path.dirname(require.resolve(`${engine.workflowPackage}/package.json`)),
		path.join(dir, 'node_modules', 'n8n-workflow'),
		'dir',
	);
	return dir;
}

/**
 * @typedef {{ method?: string, url?: string, headers: http.IncomingHttpHeaders, body: any }} RecordedRequest
 */

/** @type {RecordedRequest[]} */
const requests = [];
/** @type {http.Server} */
let server;
/** @type {string} */
let baseUrl;
/** @type {string} */
let fixtureDir;

beforeAll(async () => {
	fixtureDir = buildFixturePackage();
	server = http.createServer((req, res) => {
		let raw = '';
		req.on('data', (chunk) => (raw += chunk));
		req.on('end', () => {
			let body;
			try {
				body = raw ? JSON.parse(raw) : undefined;
			} catch {
				body = raw;
			}
			requests.push({ method: req.method, url: req.url, headers: req.headers, body });
			const send = (/** @type {number} */ status, /** @type {unknown} */ payload) => {
				res.writeHead(status, { 'content-type': 'application/json' });
				res.end(JSON.stringify(payload));
			};
			if (req.headers.authorization !== `Bearer ${API_KEY}`) {
				return send(401, { message: 'Unauthorized' });
			}
			if (req.method === 'GET' && req.url === '/me')
				return send(200, { id: 'acct_1', plan: 'free' });
			if (req.method === 'GET' && req.url?.startsWith('/contacts/')) {
				return send(200, { id: req.url.slice('/contacts/'.length), email: 'someone@example.com' });
			}
			if (req.method === 'POST' && req.url === '/contacts') {
				if (String(body?.email).includes('bad')) {
					return send(422, { message: 'Invalid email address' });
				}
				if (String(body?.email).includes('flaky')) {
					return send(503, { message: 'Try again later' });
				}
				return send(200, { id: `c_${requests.length}`, email: body?.email, created: true });
			}
			return send(404, { message: 'Not found' });
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
	const address = /** @type {import('node:net').AddressInfo} */ (server.address());
	baseUrl = `http://127.0.0.1:${address.port}`;
	await loadPackage(fixtureDir);
});

afterAll(async () => {
	await new Promise((resolve) => server.close(() => resolve(undefined)));
	fs.rmSync(fixtureDir, { recursive: true, force: true });
});

beforeEach(() => {
	requests.length = 0;
});

describe('loadPackage', () => {
	test('names node types <package>.<node> and adds the declarative "Request Options" collection', async () => {
		const pkg = await loadPackage(fixtureDir);
		expect(pkg.packageName).toBe(PACKAGE_NAME);
		expect(Object.keys(pkg.nodes)).toEqual([NODE_TYPE]);
		expect(Object.keys(pkg.credentials)).toEqual(['fixtureApi']);

		const requestOptions = pkg.nodes[NODE_TYPE].description.properties.find(
			(p) => p.name === 'requestOptions',
		);
		expect(requestOptions).toBeDefined();
		expect(requestOptions?.displayName).toBe('Request Options');
		expect(requestOptions?.type).toBe('collection');

		expect(pkg.credentials.fixtureApi.supportedNodes).toEqual([NODE_TYPE]);
		expect(typeof pkg.credentials.fixtureApi.type.authenticate).toBe('object');
		// Same instance is returned on repeated calls (cached per directory).
		expect(await loadPackage(fixtureDir)).toBe(pkg);
	});
});

describe('runWorkflow', () => {
	const credentials = () => ({ fixtureApi: { apiKey: API_KEY, baseUrl } });

	test('sends Authorization: Bearer <key> and resolves expressions per item', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: '={{ $json.email }}' },
			items: [{ email: 'a@example.com' }, { json: { email: 'b@example.com' } }],
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		expect(requests).toHaveLength(2);
		for (const request of requests) {
			expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
			expect(request.method).toBe('POST');
			expect(request.url).toBe('/contacts');
		}
		expect(requests.map((r) => r.body)).toEqual([
			{ email: 'a@example.com' },
			{ email: 'b@example.com' },
		]);
		expect(result.success.map((i) => i.json.email)).toEqual(['a@example.com', 'b@example.com']);
		expect(result.success.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(result.errors).toEqual([]);
		expect(result.executedNodes).toEqual(['Harness Source', 'Node Under Test', 'Success Sink']);
		// The API key never shows up in n8n's log output.
		expect(result.logs.length).toBeGreaterThan(0);
		expect(result.logs.join('\n')).not.toContain(API_KEY);
	});

	test('continueErrorOutput routes { error, details } items to output 1 merged with the input item (2.x; 1.x keeps them on output 0)', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: '={{ $json.email }}' },
			items: [
				{ email: 'ok1@example.com', row: 1 },
				{ email: 'bad@example.com', row: 2 },
				{ email: 'ok2@example.com', row: 3 },
			],
			credentials: credentials(),
			onError: 'continueErrorOutput',
		});

		expect(result.error).toBeUndefined();
		const rejected = {
			error: 'API rejected bad@example.com',
			details: { statusCode: 422, body: { message: 'Invalid email address' } },
		};
		if (V1) {
			expect(result.success.map((item) => item.json)).toEqual([
				expect.objectContaining({ email: 'ok1@example.com', created: true }),
				rejected,
				expect.objectContaining({ email: 'ok2@example.com', created: true }),
			]);
			expect(result.errors).toEqual([]);
			return;
		}
		expect(result.success).toEqual([
			{
				json: { id: expect.any(String), email: 'ok1@example.com', created: true },
				pairedItem: { item: 0 },
			},
			{
				json: { id: expect.any(String), email: 'ok2@example.com', created: true },
				pairedItem: { item: 2 },
			},
		]);
		expect(result.errors).toEqual([
			{
				json: {
					email: 'bad@example.com',
					row: 2,
					error: 'API rejected bad@example.com',
					details: { statusCode: 422, body: { message: 'Invalid email address' } },
				},
				pairedItem: { item: 1 },
			},
		]);
		expect(result.executedNodes).toEqual(
			expect.arrayContaining(['Harness Source', 'Node Under Test', 'Success Sink', 'Error Sink']),
		);
		expect(result.runData['Error Sink'][0].data?.main[0]).toHaveLength(1);
	});

	test('without an error output, error-shaped items stay on the main output', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: '={{ $json.email }}' },
			items: [{ email: 'bad@example.com' }],
			credentials: credentials(),
			onError: 'continueRegularOutput',
		});
		expect(result.errors).toEqual([]);
		expect(result.success).toEqual([
			{
				json: {
					error: 'API rejected bad@example.com',
					details: { statusCode: 422, body: { message: 'Invalid email address' } },
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	test('stopWorkflow surfaces a thrown NodeOperationError as the execution error', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: 'x@example.com', failMode: 'throw' },
			items: [{ n: 1 }],
			credentials: credentials(),
			onError: 'stopWorkflow',
		});
		expect(result.error).toBeDefined();
		expect(result.error.name).toBe('NodeOperationError');
		expect(result.error.message).toBe('Fixture exploded on purpose');
		expect(result.error.node?.name).toBe('Node Under Test');
		expect(result.nodeError?.message).toBe('Fixture exploded on purpose');
		expect(result.run.status).toBe('error');
		expect(result.success).toEqual([]);
		expect(result.executedNodes).not.toContain('Success Sink');
		expect(requests).toHaveLength(0);
	});

	test('a node that throws under continueRegular/ErrorOutput: the engine passes the INPUT items through on output 0', async () => {
		for (const onError of /** @type {const} */ (['continueRegularOutput', 'continueErrorOutput'])) {
			const result = await runWorkflow({
				nodeType: NODE_TYPE,
				parameters: {
					resource: 'thing',
					operation: 'do',
					email: 'x@example.com',
					failMode: 'throw',
				},
				items: [{ n: 1 }, { n: 2 }],
				credentials: credentials(),
				onError,
			});
			expect(result.error).toBeUndefined();
			expect(result.run.status).toBe('success');
			expect(result.nodeError?.message).toBe('Fixture exploded on purpose');
			expect(result.success).toEqual([
				{ json: { n: 1 }, pairedItem: { item: 0 } },
				{ json: { n: 2 }, pairedItem: { item: 1 } },
			]);
			expect(result.errors).toEqual([]);
		}
	});

	test('a node that catches and checks this.continueOnFail() gets its { error } items routed to output 1', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: 'x@example.com', failMode: 'catch' },
			items: [{ n: 1 }],
			credentials: credentials(),
			onError: 'continueErrorOutput',
		});
		expect(result.nodeError).toBeUndefined();
		expect(result.success).toEqual([]);
		expect(result.errors).toEqual([
			{ json: { n: 1, error: 'Fixture exploded on purpose' }, pairedItem: { item: 0 } },
		]);

		const stopped = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: 'x@example.com', failMode: 'catch' },
			items: [{ n: 1 }],
			credentials: credentials(),
			onError: 'stopWorkflow',
		});
		expect(stopped.error?.message).toBe('Fixture exploded on purpose');
	});

	test('item.error routes to the error output (json replaced by { error: message }); json with extra keys does not route', async () => {
		const itemError = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: {
				resource: 'thing',
				operation: 'do',
				email: 'bad@example.com',
				errorShape: 'itemError',
			},
			items: [{ row: 7 }],
			credentials: credentials(),
			onError: 'continueErrorOutput',
		});
		expect(itemError.success).toEqual([]);
		expect(itemError.errors).toHaveLength(1);
		// The engine merges the paired input item into the error item, but then
		// normalizeNodeErrors() replaces json of every item carrying .error.
		expect(itemError.errors[0].json).toEqual({ error: 'API rejected bad@example.com' });
		expect(itemError.errors[0].error?.message).toBe('API rejected bad@example.com');
		expect(itemError.errors[0].pairedItem).toEqual({ item: 0 });

		const extraKey = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: {
				resource: 'thing',
				operation: 'do',
				email: 'bad@example.com',
				errorShape: 'extraKey',
			},
			items: [{ row: 7 }],
			credentials: credentials(),
			onError: 'continueErrorOutput',
		});
		expect(extraKey.errors).toEqual([]);
		expect(extraKey.success).toHaveLength(1);
		expect(extraKey.success[0].json.code).toBe('E_REJECTED');
	});

	test('a wrong API key reaches the server as a Bearer header and gets a 401', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: 'a@example.com' },
			items: [{ n: 1 }],
			credentials: { fixtureApi: { apiKey: 'wrong-key', baseUrl } },
			onError: 'continueErrorOutput',
		});
		// ignoreHttpStatusErrors: no exception, so no "re-send once on 401".
		expect(requests).toHaveLength(1);
		expect(requests[0].headers.authorization).toBe('Bearer wrong-key');
		// 1.x leaves { error, details } on the main output.
		const failed = V1 ? result.success : result.errors;
		expect(failed).toHaveLength(1);
		expect(failed[0].json.details).toEqual({
			statusCode: 401,
			body: { message: 'Unauthorized' },
		});
	});

	test('a thrown 401 is re-sent once by n8n-core (preAuthentication retry) and then fails the node', async () => {
		const secret = 'wrong-key-5f2c9a';
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: {
				resource: 'thing',
				operation: 'do',
				email: 'a@example.com',
				failMode: 'strict',
			},
			items: [{ n: 1 }],
			credentials: { fixtureApi: { apiKey: secret, baseUrl } },
		});
		expect(requests).toHaveLength(2);
		expect(result.error?.name).toBe('NodeApiError');
		expect(result.error?.httpCode).toBe('401');
		expect(result.logs.join('\n')).not.toContain(secret);
	});

	test('operations without a custom operation run through the declarative RoutingNode', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'get', contactId: '={{ $json.id }}' },
			items: [{ id: 'c_1' }, { id: 'c_2' }],
			credentials: credentials(),
		});
		expect(result.error).toBeUndefined();
		expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
			'GET /contacts/c_1',
			'GET /contacts/c_2',
		]);
		expect(requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
		expect(requests[0].headers.accept).toBe('application/json');
		expect(result.success).toEqual([
			{ json: { id: 'c_1', email: 'someone@example.com' }, pairedItem: { item: 0 } },
			{ json: { id: 'c_2', email: 'someone@example.com' }, pairedItem: { item: 1 } },
		]);
	});

	test('retryOnFail re-runs the node maxTries times', async () => {
		const result = await runWorkflow({
			nodeType: NODE_TYPE,
			parameters: { resource: 'thing', operation: 'do', email: 'flaky@example.com' },
			items: [{ n: 1 }],
			credentials: credentials(),
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 10,
		});
		expect(requests).toHaveLength(3);
		expect(result.error?.name).toBe('NodeApiError');
		expect(result.error?.httpCode).toBe('503');
		expect(result.error?.message).toMatch(/^Service unavailable/);
	});
});

describe('testCredential', () => {
	test('returns OK for a 200', async () => {
		await expect(
			testCredential({ credentialType: 'fixtureApi', data: { apiKey: API_KEY, baseUrl } }),
		).resolves.toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(requests).toHaveLength(1);
		expect(requests[0]).toMatchObject({ method: 'GET', url: '/me' });
		expect(requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
	});

	test('applies responseCode rules for a 401 (2.x; 1.x reports the NodeApiError message)', async () => {
		const secret = 'nope-7d1e33-not-a-key';
		clearLogs();
		await expect(
			testCredential({ credentialType: 'fixtureApi', data: { apiKey: secret, baseUrl } }),
		).resolves.toEqual({
			status: 'Error',
			message: V1 ? 'Authorization failed - please check your credentials' : 'Invalid API key',
		});
		// n8n-core re-sends a thrown 401 once (preAuthentication retry path).
		expect(requests).toHaveLength(2);
		expect(getLogs().length).toBeGreaterThan(0);
		expect(getLogs().join('\n')).not.toContain(secret);
	});

	test('falls back to "Received HTTP status code" / statusText without a matching rule (2.x; 1.x: NodeApiError message)', async () => {
		const result = await testCredential({
			credentialType: 'fixtureApi',
			data: { apiKey: API_KEY, baseUrl: `${baseUrl}/nowhere` },
		});
		expect(result.status).toBe('Error');
		expect(result.message).toBe(
			V1 ? 'The resource you are requesting could not be found' : 'Not Found',
		);
	});

	test('reports the network error code when nothing listens (2.x; 1.x: NodeApiError message)', async () => {
		const result = await testCredential({
			credentialType: 'fixtureApi',
			data: { apiKey: API_KEY, baseUrl: 'http://127.0.0.1:1' },
		});
		expect(result).toEqual({
			status: 'Error',
			message: V1 ? 'The service refused the connection - perhaps it is offline' : 'ECONNREFUSED',
		});
	});
});
