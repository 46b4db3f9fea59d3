// @ts-check
'use strict';

/**
 * Settings that fail clearly (in node runs and in the credential test) and input the
 * node refuses instead of sending it silently changed. A setting that cannot work fails every
 * item as invalid_input with nothing sent; nothing throws, and no message holds the key or a
 * password.
 */

const http = require('node:http');
const net = require('node:net');
const { NodeHelpers } = require('n8n-workflow');
const { clearLogs, getLogs } = require('../harness/n8n');
const {
	API_KEY,
	CREDENTIAL_TYPE,
	PACKAGE_DIR,
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

/** The sandbox's Base URL with `userinfo@` before its host. */
const withUserinfo = (/** @type {string} */ userinfo) =>
	sandbox.baseUrl.replace('http://', `http://${userinfo}@`);

describe('a Base URL with a user name or password', () => {
	test.each([`user:${PASSWORD}`, 'user'])(
		'the credential test refuses a Base URL with %s@, sending nothing',
		async (userinfo) => {
			clearLogs();
			const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: withUserinfo(userinfo) });
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(
				/^The Base URL in the credential contains a user name or password/,
			);
			expect(result.message).toMatch(/instead of the API key/);
			expect(result.message).not.toContain(PASSWORD);
			expect(result.message).not.toContain(API_KEY);
			expect(getLogs().join('\n')).not.toContain(PASSWORD);
			expect(sandbox.requests).toHaveLength(0);
		},
	);
});

describe('a Base URL without the API path', () => {
	test.each([
		['404', () => new URL(sandbox.baseUrl).origin],
		[
			'404 web page',
			() => {
				sandbox.injectFaults([{ status: 404, body: '<html>Cannot POST /email/send</html>' }]);
				return sandbox.baseUrl;
			},
		],
	])(
		"the credential test's %s says the Base URL must include the API's path",
		async (_, baseUrl) => {
			const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: baseUrl() });
			expect(result.status).toBe('Error');
			expect(result.message).toContain(PATH_HINT);
		},
	);
});

describe('http:// to another machine', () => {
	const REMOTE = 'http://gateway.test:1/api/v0/dev';

	test('the credential test of the sandbox on 127.0.0.1 is not warned about', async () => {
		expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
	});

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

	test('node runs still work with a non-local http:// Base URL', async () => {
		// A proxy stands for the network path to the gateway: every request goes to the sandbox.
		const {
			port: proxyPort,
			proxied,
			close,
		} = await startProxy({
			toPort: new URL(sandbox.baseUrl).port,
		});
		try {
			const result = await runNode(sandbox, {
				parameters: sendParameters({ requestOptions: { proxy: `http://127.0.0.1:${proxyPort}` } }),
				items: contacts(1),
				baseUrl: REMOTE,
			});
			expect(result.error).toBeUndefined();
			expect(proxied).toEqual([`POST ${REMOTE}/email/send`]);
			expect(sandbox.state.emails).toHaveLength(1);
		} finally {
			close();
		}
	});

	test('the credential form shows its notice for http:// to another machine only', async () => {
		const { type } = (await loadPackage(PACKAGE_DIR)).credentials[CREDENTIAL_TYPE];
		const notice = type.properties.find((property) => property.type === 'notice');
		const shown = (/** @type {string} */ baseUrl) =>
			NodeHelpers.displayParameter(
				{ apiKey: '', baseUrl },
				/** @type {any} */ (notice),
				null,
				null,
			);
		// Which Base URLs it names: test/unit/readers.test.js, over the same expression.
		expect(shown(REMOTE)).toBe(true);
		expect(shown(sandbox.baseUrl)).toBe(false);
	});
});

describe('a key pasted with "Bearer "', () => {
	test('the credential test says to paste only the key, sending nothing', async () => {
		const result = await runCredentialTest({
			apiKey: `Bearer ${API_KEY}`,
			baseUrl: sandbox.baseUrl,
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/Paste only the key, without "Bearer "/);
		expect(result.message).not.toContain(API_KEY);
		expect(sandbox.requests).toHaveLength(0);
	});
});

describe('the credential test ends within 15 seconds', () => {
	const DEADLINE = /^BasicsEngage did not answer within 15 seconds: check the Base URL/;

	/**
	 * Runs the credential test against `server`, expecting the deadline's message in 15 to 25 s.
	 * @param {http.Server | net.Server} server @param {() => void} closeConnections
	 */
	async function expectDeadline(server, closeConnections) {
		const port = await listen(server);
		try {
			const started = Date.now();
			const result = await runCredentialTest({
				apiKey: API_KEY,
				baseUrl: loopbackBaseUrl(port),
			});
			const seconds = (Date.now() - started) / 1000;
			expect(result).toEqual({ status: 'Error', message: expect.stringMatching(DEADLINE) });
			expect(seconds).toBeGreaterThanOrEqual(14.5);
			expect(seconds).toBeLessThan(25);
		} finally {
			closeConnections();
			server.close();
		}
	}

	test('a server that accepts the connection and never answers', async () => {
		/** @type {Set<net.Socket>} */
		const sockets = new Set();
		const silent = net.createServer((socket) => {
			sockets.add(socket);
			socket.on('error', () => {});
		});
		await expectDeadline(silent, () => sockets.forEach((socket) => socket.destroy()));
	}, 40_000);

	test('a server that sends headers, then a byte every second', async () => {
		const dripping = http.createServer((request, response) => {
			response.writeHead(200, { 'content-type': 'application/json' });
			response.write('{"status":"success",');
			const drip = setInterval(() => response.write(' '), 1000);
			response.on('close', () => clearInterval(drip));
		});
		await expectDeadline(dripping, () => dripping.closeAllConnections());
	}, 40_000);
});

describe('template variables n8n cannot send', () => {
	const TEMPLATE = { content: 'template', templateId: 'tmpl_welcome' };

	// prettier-ignore
	test.each([
		['Using Fields Below', { templateVariablesMode: 'keyValue', templateVariables: { variable: [{ name: '={{ $json.name }}', value: 'Jane' }] } }],
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
