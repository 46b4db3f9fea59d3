// @ts-check
'use strict';

/**
 * n8n adds "Request Options" (batching, proxy, SSL, timeout) to every declarative node; each
 * must work as its label says. Timeout is covered with the network errors.
 */

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');
const {
	NODE_TYPE,
	PACKAGE_DIR,
	closedBaseUrl,
	contacts,
	listen,
	loadPackage,
	runNode,
	sendParameters,
	startProxy,
	useSandbox,
} = require('../support');

const sandbox = useSandbox();

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
	'Proxy: requests go through the given HTTP proxy; a password written as URLs want it (%s) reaches it as %s',
	async (written, credential) => {
		const { port: proxyPort, proxied, credentials, close } = await startProxy();
		try {
			const result = await runNode(sandbox, {
				parameters: sendParameters({
					requestOptions: {
						proxy: `http://${credential ? `relay:${written}@` : ''}127.0.0.1:${proxyPort}`,
					},
				}),
				items: contacts(1),
			});
			expect(result.error).toBeUndefined();
			expect(proxied).toEqual([`POST ${sandbox.baseUrl}/email/send`]);
			expect(credentials).toEqual([credential]);
			expect(sandbox.state.emails).toHaveLength(1);
		} finally {
			close();
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
	afterAll(() => server.close());

	test('off (default): a self-signed certificate fails as network_error', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			baseUrl,
			onError: 'continueErrorOutput',
		});
		expect(result.errors[0].json.details.kind).toBe('network_error');
	});

	test('on: the self-signed certificate is accepted', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ requestOptions: { allowUnauthorizedCerts: true } }),
			items: contacts(1),
			baseUrl,
		});
		expect(result.success[0].json.messageId).toBe('msg_tls');
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
