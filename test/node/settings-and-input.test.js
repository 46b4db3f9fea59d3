// @ts-check
'use strict';

/**
 * Settings: a credential or option that cannot work fails clearly (in runs and in the credential
 * test), never holding the key or a password; n8n's Request Options work as labelled; a careless
 * server or hostile proxy cannot make the node throw, wait for ever or show the key (one answer's
 * classification: test/unit/answers.test.js; per operation: operations.test.js; an answer that
 * drips past the Timeout: the model, test/reliability/model.test.js).
 */

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { clearLogs, getLogs } = require('../harness/n8n');
const {
	API_KEY,
	NODE_TYPE,
	PACKAGE_DIR,
	addProfilesParameters,
	closedBaseUrl,
	contacts,
	expectEachInputExactlyOnce,
	listen,
	loadPackage,
	loopbackBaseUrl,
	runCredentialTest,
	runNode,
	sendParameters,
	startProxy,
	useSandbox,
} = require('../support');

const PASSWORD = 's3cret-pw';
const PATH_HINT =
	"check the Base URL in the credential: it must include the API's path, like https://api.basicsengage.com/api/v0/dev";

const sandbox = useSandbox();
// A Base URL using http:// to another machine; in node runs a proxy stands for the path to it.
const REMOTE = 'http://gateway.test:1/api/v0/dev';

/** Sends a 200's headers, then a byte every `everyMs`, for ever. @param {number} everyMs */
function drippingServer(everyMs) {
	return http.createServer((request, response) => {
		response.writeHead(200, { 'content-type': 'application/json' });
		response.write('{"status":"success",');
		const drip = setInterval(() => response.write(' '), everyMs);
		response.on('close', () => clearInterval(drip));
	});
}

/** The sandbox's Base URL with `userinfo@` before its host. */
const withUserinfo = (/** @type {string} */ userinfo) =>
	sandbox.baseUrl.replace('http://', `http://${userinfo}@`);

/** @type {Array<[string, () => object, RegExp]>} */
const CREDENTIAL_REFUSALS = [
	[
		`a Base URL with user:${PASSWORD}@`,
		() => ({ baseUrl: withUserinfo(`user:${PASSWORD}`) }),
		/^The Base URL in the credential contains a user name or password.*instead of the API key/,
	],
	[
		'a key pasted with "Bearer "',
		() => ({ apiKey: `Bearer ${API_KEY}` }),
		/Paste only the key, without "Bearer "/,
	],
];

test.each(CREDENTIAL_REFUSALS)(
	'the credential test refuses %s, saying why, sending nothing, showing neither key nor password',
	async (_, credential, message) => {
		clearLogs();
		const result = await runCredentialTest({
			apiKey: API_KEY,
			baseUrl: sandbox.baseUrl,
			...credential(),
		});
		expect(result).toEqual({ status: 'Error', message: expect.stringMatching(message) });
		for (const secret of [PASSWORD, API_KEY]) expect(result.message).not.toContain(secret);
		expect(getLogs().join('\n')).not.toContain(PASSWORD);
		expect(sandbox.requests).toHaveLength(0);
	},
);

// Whatever the body of the 404, it has no "status" field of the API.
test("the credential test of a Base URL without the API's path (404) says it must include it", async () => {
	const baseUrl = new URL(sandbox.baseUrl).origin;
	const result = await runCredentialTest({ apiKey: API_KEY, baseUrl });
	expect(result.status).toBe('Error');
	expect(result.message).toContain(PATH_HINT);
});

describe('http:// to another machine', () => {
	// The sandbox on 127.0.0.1 passes unwarned: test/credential.test.js.
	test('the credential test of a non-local http:// host says the key would travel unencrypted, and sends nothing', async () => {
		const started = Date.now();
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: REMOTE });
		expect(result.status).toBe('Error');
		// A request would have ended in a DNS error (ENOTFOUND), not in this text.
		expect(result.message).toMatch(
			/^Not tested, to keep the API key off the network: the Base URL uses http:\/\/ to gateway\.test:1, so the key would travel unencrypted\. Use https:\/\//,
		);
		expect(Date.now() - started).toBeLessThan(5000);
	});
});

// The deadline runs from the request's start whatever arrives (an AbortSignal in the credential):
// a server that never answers meets it as this one does.
test('the credential test ends within 15 seconds: a server that sends headers, then a byte every second', async () => {
	const dripping = drippingServer(1000);
	const port = await listen(dripping);
	try {
		const started = Date.now();
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: loopbackBaseUrl(port) });
		const seconds = (Date.now() - started) / 1000;
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(
				/^BasicsEngage did not answer within 15 seconds: check the Base URL/,
			),
		});
		expect(seconds).toBeGreaterThanOrEqual(14.5);
		expect(seconds).toBeLessThan(25);
	} finally {
		dripping.closeAllConnections();
		dripping.close();
	}
}, 40_000);

describe('template variables n8n cannot send', () => {
	const TEMPLATE = { content: 'template', templateId: 'tmpl_welcome' };

	test.each([
		[
			'Using Fields Below',
			{
				templateVariablesMode: 'keyValue',
				templateVariables: { variable: [{ name: '={{ $json.name }}', value: 'Jane' }] },
			},
		],
		[
			'Using JSON',
			{
				templateVariablesMode: 'json',
				templateVariablesJson:
					'={{ JSON.stringify({ company: "Acme" }).replace("company", $json.name) }}',
			},
		],
	])(
		'%s: a variable named constructor, prototype or __proto__ fails its item, naming it; the others are sent',
		async (_, variables) => {
			const names = ['firstName', 'constructor', 'prototype', '__proto__'];
			const result = await runNode(sandbox, {
				parameters: sendParameters({ ...TEMPLATE, ...variables }),
				items: names.map((name, index) => ({ ...contacts(1, index)[0], name })),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests.map((request) => request.body.to)).toEqual([
				'contact0@customer.test',
			]);
			expect(result.success).toHaveLength(1);
			expect(result.errors.map((item) => [item.json.name, item.json.details.kind])).toEqual(
				names.slice(1).map((name) => [name, 'invalid_input']),
			);
			for (const item of result.errors) {
				expect(item.json.error).toBe(`Template variable "${item.json.name}" cannot be sent`);
				expect(item.json.details.description).toMatch(/Rename/);
			}
			expectEachInputExactlyOnce(result, 4);
		},
	);

	test('Using JSON: every such name is listed', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				...TEMPLATE,
				templateVariablesMode: 'json',
				templateVariablesJson: '{ "constructor": "a", "firstName": "b", "__proto__": "c" }',
			}),
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(0);
		expect(result.errors[0].json.error).toBe(
			'Template variables "constructor", "__proto__" cannot be sent',
		);
	});
});

// n8n's Request Options (batching, proxy, SSL, timeout), added to every declarative node.

test('Batching: waits the batch interval before each batch of requests', async () => {
	// Lower bounds only: request k may not start before floor(k / 2) intervals have passed.
	const interval = 150;
	const started = Date.now();
	const result = await runNode(sandbox, {
		parameters: sendParameters({
			options: { concurrency: 5 },
			requestOptions: { batching: { batch: { batchSize: 2, batchInterval: interval } } },
		}),
		items: contacts(5),
	});
	expect(result.success).toHaveLength(5);
	const sinceStart = sandbox.requests.map((request) => Date.parse(request.receivedAt) - started);
	expect(sinceStart[2]).toBeGreaterThanOrEqual(interval - 2);
	expect(sinceStart[3]).toBeGreaterThanOrEqual(interval - 2);
	expect(sinceStart[4]).toBeGreaterThanOrEqual(2 * interval - 2);
});

test.each([
	['100%25', 'relay:100%'],
	['p%40ss%3Aw%2Frd', 'relay:p@ss:w/rd'],
	['plain', 'relay:plain'],
	['none', undefined],
])(
	'Proxy: requests go through the given HTTP proxy, also to an http:// Base URL on another machine; a password written as URLs want it (%s) reaches it as %s',
	async (written, credential) => {
		const proxy = await startProxy(new URL(sandbox.baseUrl).port);
		try {
			const result = await runNode(sandbox, {
				parameters: sendParameters({
					requestOptions: {
						proxy: `http://${credential ? `relay:${written}@` : ''}127.0.0.1:${proxy.port}`,
					},
				}),
				items: contacts(1),
				baseUrl: REMOTE,
			});
			expect(result.error).toBeUndefined();
			expect(proxy.proxied).toEqual([`POST ${REMOTE}/email/send`]);
			expect(proxy.credentials).toEqual([credential]);
			expect(sandbox.state.emails).toHaveLength(1);
		} finally {
			proxy.close();
		}
	},
);

test('Proxy: when the proxy cannot be reached, the items name the Proxy setting', async () => {
	const closed = new URL(await closedBaseUrl());
	const result = await runNode(sandbox, {
		parameters: sendParameters({
			requestOptions: { proxy: `http://relay:100%25@127.0.0.1:${closed.port}` },
			options: { retries: 0 },
		}),
		items: contacts(1),
		onError: 'continueErrorOutput',
	});
	expect(result.errors[0].json.details.kind).toBe('network_error');
	expect(result.errors[0].json.details.description).toMatch(/Proxy in Request Options/);
	expect(sandbox.requests).toHaveLength(0);
});

describe('Ignore SSL Issues (Insecure)', () => {
	/** @type {https.Server} */
	let server;
	/** @type {string} */
	let baseUrl;
	beforeAll(async () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'basicsengage-tls-'));
		execFileSync(
			'openssl',
			[
				'req',
				'-x509',
				'-newkey',
				'rsa:2048',
				'-nodes',
				'-days',
				'1',
				'-subj',
				'/CN=127.0.0.1',
				'-keyout',
				path.join(dir, 'key.pem'),
				'-out',
				path.join(dir, 'cert.pem'),
			],
			{ stdio: 'ignore' },
		);
		server = https.createServer(
			{
				key: fs.readFileSync(path.join(dir, 'key.pem')),
				cert: fs.readFileSync(path.join(dir, 'cert.pem')),
			},
			(_request, response) => {
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(
					JSON.stringify({
						status: 'success',
						message: 'Email queued successfully',
						data: { messageId: 'msg_tls', dailyEmailCount: 1, dailyEmailLimit: 10 },
					}),
				);
			},
		);
		baseUrl = `https://127.0.0.1:${await listen(server)}/api/v0/dev`;
		fs.rmSync(dir, { recursive: true, force: true });
	});
	afterAll(() => {
		server.close();
	});

	test('off (default) a self-signed certificate fails as network_error; on, it is accepted', async () => {
		const run = (/** @type {boolean} */ allowUnauthorizedCerts) =>
			runNode(sandbox, {
				parameters: sendParameters({ requestOptions: { allowUnauthorizedCerts } }),
				items: contacts(1),
				baseUrl,
				onError: 'continueErrorOutput',
			});
		expect((await run(false)).errors[0].json.details.kind).toBe('network_error');
		expect((await run(true)).success[0].json.messageId).toBe('msg_tls');
	});
});

test("Request Options: the node declares n8n's collection once, with n8n's field names and defaults", async () => {
	// n8n adds its collection only to declarative nodes without `execute`; this node has one
	// (for the AI-tool path), so it declares the same fields and saved workflows keep them.
	const { coreInternal } = require('../harness/resolve');
	const { commonDeclarativeNodeOptionParameters: n8nOwn } = coreInternal(
		'dist/nodes-loader/constants.js',
	);
	const { nodes } = await loadPackage(PACKAGE_DIR);
	const { properties } = nodes[NODE_TYPE].description;
	const declared = properties.filter((property) => property.name === 'requestOptions');
	expect(declared).toHaveLength(1);
	/** @param {any} collection */
	const shape = (collection) =>
		collection.options
			.map((/** @type {any} */ option) => ({
				name: option.name,
				type: option.type,
				default: option.default,
				values: option.options?.[0]?.values?.map((/** @type {any} */ value) => [
					value.name,
					value.type,
					value.default,
				]),
			}))
			.sort((/** @type {any} */ a, /** @type {any} */ b) => a.name.localeCompare(b.name));
	expect(shape(declared[0])).toEqual(shape(n8nOwn));
	expect(declared[0].isNodeSetting).toBe(true);
});

test('the API key never leaves for another host: the credential test does not follow a redirect', async () => {
	// Redirected to the sandbox's own origin: a followed redirect would be its second request.
	sandbox.injectFaults([
		{ status: 302, body: '', headers: { location: `${sandbox.baseUrl}/elsewhere` } },
	]);
	const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
	expect(result.status).toBe('Error');
	expect(sandbox.requests).toHaveLength(1);
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

	test('the key echoed in any answer is redacted from the credential test result', async () => {
		for (const fault of Object.values(echoes)) {
			sandbox.reset();
			sandbox.injectFaults([fault]);
			const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
			expect(result.message).not.toContain(API_KEY);
		}
	});

	test('a deeply nested JSON error body never throws: the items land on the error output', async () => {
		const depth = 100_000;
		const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
		// The transport reads every operation's answers; what it shows of them: test/unit/answers.
		for (const status of [500, 200]) {
			sandbox.reset();
			sandbox.injectFaults([
				{ status, body: nested, headers: { 'content-type': 'application/json' } },
			]);
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(2),
				onError: 'continueErrorOutput',
			});
			expect(result.error).toBeUndefined();
			expect(result.errors).toHaveLength(1);
			expectEachInputExactlyOnce(result, 2);
		}
	});
});

describe('a 200 must be the contract 200', () => {
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
