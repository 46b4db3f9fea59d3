// @ts-check
'use strict';

/**
 * Issue 20: settings that fail clearly (in node runs and in the credential test) and input the
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
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	expectNoSecret,
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

/**
 * Every one of `count` items failed as invalid_input with a message matching `names`, nothing
 * was sent, and none of `secrets` shows. Runs under On Error = Continue (error output).
 * @param {any} result @param {number} count @param {RegExp} names @param {string[]} secrets
 */
function expectEveryItemRefused(result, count, names, secrets) {
	expect(sandbox.requests).toHaveLength(0);
	expect(result.success).toEqual([]);
	expect(result.errors).toHaveLength(count);
	for (const item of result.errors) {
		expect(item.json.details.kind).toBe('invalid_input');
		expect(`${item.json.error} ${item.json.details.description}`).toMatch(names);
	}
	expectEachInputExactlyOnce(result, count);
	const shown = JSON.stringify({ errors: result.errors, logs: result.logs });
	for (const secret of secrets) expect(shown).not.toContain(secret);
}

describe('issue 20, settings: a Base URL with a user name or password', () => {
	test.each([`user:${PASSWORD}`, 'user'])(
		'issue 20, settings: a Base URL with %s@ fails every item, saying why, with nothing sent',
		async (userinfo) => {
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(2),
				baseUrl: withUserinfo(userinfo),
				onError: 'continueErrorOutput',
			});
			expectEveryItemRefused(result, 2, /Base URL .*user name or password/, [PASSWORD, API_KEY]);
			expect(result.errors[0].json.details.description).toMatch(/instead of the API key/);
		},
	);

	test.each([`user:${PASSWORD}`, 'user'])(
		'issue 20, settings: the credential test refuses a Base URL with %s@, sending nothing',
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

describe('issue 20, settings: a Base URL without the API path', () => {
	test("issue 20, settings: a 404 item error says the Base URL must include the API's path", async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(1),
			baseUrl: new URL(sandbox.baseUrl).origin,
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests[0].path).toBe('/email/send');
		expect(result.errors[0].json.details).toMatchObject({
			kind: 'unexpected_response',
			httpCode: 404,
		});
		expect(result.errors[0].json.details.description).toContain(PATH_HINT);
	});

	test("issue 20, settings: the credential test's 404 says the Base URL must include the API's path", async () => {
		const result = await runCredentialTest({
			apiKey: API_KEY,
			baseUrl: new URL(sandbox.baseUrl).origin,
		});
		expect(result.status).toBe('Error');
		expect(result.message).toContain(PATH_HINT);
	});

	test("issue 20, settings: the credential test's 404 web page says so too", async () => {
		sandbox.injectFaults([{ status: 404, body: '<html>Cannot POST /email/send</html>' }]);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result.status).toBe('Error');
		expect(result.message).toContain(PATH_HINT);
	});
});

describe('issue 20, settings: a proxy password with a stray "%"', () => {
	test('issue 20, settings: every item fails as invalid_input naming the Proxy, nothing sent, under Continue (regular output)', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({
				requestOptions: { proxy: `http://user:${PASSWORD}50%off@127.0.0.1:9` },
			}),
			items: contacts(3),
			onError: 'continueRegularOutput',
		});
		expect(result.error).toBeUndefined();
		expect(sandbox.requests).toHaveLength(0);
		expect(result.success).toHaveLength(3);
		for (const item of result.success) {
			expect(item.json.details.kind).toBe('invalid_input');
			expect(item.json.error).toMatch(/^The Proxy in Request Options is not valid: .*"%"/);
		}
		expectEachInputExactlyOnce(result, 3);
		expect(JSON.stringify(result.success)).not.toContain(PASSWORD);
		expectNoSecret(result, API_KEY);
	});
});

describe('issue 20, settings: http:// to another machine', () => {
	const REMOTE = 'http://gateway.test:1/api/v0/dev';

	test('issue 20, settings: the credential test of the sandbox on 127.0.0.1 is not warned about', async () => {
		expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: sandbox.baseUrl });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
	});

	test('issue 20, settings: the credential test of a non-local http:// host says the key would travel unencrypted, and sends nothing', async () => {
		const started = Date.now();
		const result = await runCredentialTest({ apiKey: API_KEY, baseUrl: REMOTE });
		expect(result.status).toBe('Error');
		// A request would have ended in a DNS error (ENOTFOUND), not in this text.
		expect(result.message).toMatch(
			/^Not tested, to keep the API key off the network: the Base URL uses http:\/\/ to gateway\.test:1, so the key would travel unencrypted\. Use https:\/\//,
		);
		expect(Date.now() - started).toBeLessThan(5000);
	});

	test('issue 20, settings: node runs still work with a non-local http:// Base URL', async () => {
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

	test('issue 20, settings: the credential form shows its notice for http:// to another machine only', async () => {
		const { type } = (await loadPackage(PACKAGE_DIR)).credentials[CREDENTIAL_TYPE];
		const notice = type.properties.find((property) => property.type === 'notice');
		const shown = (/** @type {string} */ baseUrl) =>
			NodeHelpers.displayParameter(
				{ apiKey: '', baseUrl },
				/** @type {any} */ (notice),
				null,
				null,
			);
		for (const baseUrl of [REMOTE, 'HTTP://10.0.0.5/api/v0/dev', 'http://localhost.example.com']) {
			expect([baseUrl, shown(baseUrl)]).toEqual([baseUrl, true]);
		}
		for (const baseUrl of [
			'https://api.basicsengage.com/api/v0/dev',
			'https://gateway.test/api/v0/dev',
			sandbox.baseUrl,
			'http://127.0.0.1',
			'http://localhost:4010/api/v0/dev',
			'http://[::1]:4010/api/v0/dev',
		]) {
			expect([baseUrl, shown(baseUrl)]).toEqual([baseUrl, false]);
		}
	});
});

describe('issue 20, settings: a key pasted with "Bearer "', () => {
	test.each(['Bearer ', 'bearer ', 'BEARER  '])(
		'issue 20, settings: a key given as "%s<key>" fails every item: paste only the key',
		async (prefix) => {
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(2),
				apiKey: `${prefix}${API_KEY}`,
				onError: 'continueErrorOutput',
			});
			expectEveryItemRefused(result, 2, /Paste only the key, without "Bearer "/, [API_KEY]);
		},
	);

	test('issue 20, settings: the credential test says to paste only the key, sending nothing', async () => {
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

describe('issue 20, settings: the credential test ends within 15 seconds', () => {
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

	test('issue 20, settings: a server that accepts the connection and never answers', async () => {
		/** @type {Set<net.Socket>} */
		const sockets = new Set();
		const silent = net.createServer((socket) => {
			sockets.add(socket);
			socket.on('error', () => {});
		});
		await expectDeadline(silent, () => sockets.forEach((socket) => socket.destroy()));
	}, 40_000);

	test('issue 20, settings: a server that sends headers, then a byte every second', async () => {
		const dripping = http.createServer((request, response) => {
			response.writeHead(200, { 'content-type': 'application/json' });
			response.write('{"status":"success",');
			const drip = setInterval(() => response.write(' '), 1000);
			response.on('close', () => clearInterval(drip));
		});
		await expectDeadline(dripping, () => dripping.closeAllConnections());
	}, 40_000);
});

describe('issue 20, input: template variables n8n cannot send', () => {
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
		'issue 20, input: %s: a variable named constructor, prototype or __proto__ fails its item, naming it; the others are sent',
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

	test('issue 20, input: Using JSON: every such name is listed', async () => {
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

describe('issue 20, input: addresses with invisible characters', () => {
	// Zero-width space, non-joiner and joiner, word joiner, BOM, soft hyphen, a right-to-left
	// override, a no-break space and a line separator.
	const INVISIBLE = ['200b', '200c', '200d', '2060', 'feff', '00ad', '202e', '00a0', '2028'];
	const hidden = (/** @type {string} */ code) =>
		`jane${String.fromCodePoint(parseInt(code, 16))}@customer.test`;

	test('issue 20, input: To with an invisible character fails its item, showing it as \\uXXXX; the others are sent', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: [{ email: 'ok@customer.test' }, ...INVISIBLE.map((code) => ({ email: hidden(code) }))],
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests.map((request) => request.body.to)).toEqual(['ok@customer.test']);
		expect(result.errors).toHaveLength(INVISIBLE.length);
		result.errors.forEach((item, index) => {
			expect(item.json.details.kind).toBe('invalid_input');
			expect(item.json.error).toBe(
				`To is not a valid email address: "jane\\u${INVISIBLE[index]}@customer.test"`,
			);
			expect(item.json.details.description).toMatch(/^To contains an invisible character/);
		});
	});

	test('issue 20, input: From with a zero-width space fails every item, nothing sent', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ from: 'hello\u200b@example.com' }),
			items: contacts(2),
			onError: 'continueErrorOutput',
		});
		expectEveryItemRefused(
			result,
			2,
			/^From is not a valid email address: "hello\\u200b@example\.com"/,
			[],
		);
	});

	test("issue 20, input: Add Profiles' Email with a zero-width space fails its item; the others are added", async () => {
		const items = contacts(3);
		items[1].email = hidden('200b');
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters(),
			items,
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(
			sandbox.requests[0].body.profiles.map((/** @type {any} */ profile) => profile.email),
		).toEqual([items[0].email, items[2].email]);
		expect(result.errors).toHaveLength(1);
		expect(result.errors[0].json.details.kind).toBe('invalid_input');
		expect(result.errors[0].json.error).toBe(
			'Email is not a valid email address: "jane\\u200b@customer.test"',
		);
		expectEachInputExactlyOnce(result, 3);
	});
});
