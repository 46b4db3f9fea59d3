// @ts-check
'use strict';

// The built package, n8n's engine (test/harness) and the sandbox (test/sandbox) wired together,
// plus the invariants every node test checks.

const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { deduplicationStore, runWorkflow, loadPackage, testCredential } = require('./harness/n8n');
const parameters = require('./parameters');
const { startSandbox } = require('./sandbox/server');

const PACKAGE_DIR = path.resolve(__dirname, '..');
const SCHEMA_DIR = path.join(PACKAGE_DIR, 'dist/nodes/BasicsEngage/__schema__/v1.0.0');
const NODE_TYPE = 'n8n-nodes-basicsengage.basicsEngage';
const CREDENTIAL_TYPE = 'basicsEngageApi';
const API_KEY = 'be_sandbox_demo_key';

/**
 * @typedef {import('./sandbox/server').SandboxHandle} SandboxHandle
 * @typedef {import('./sandbox/server').RecordedRequest} RecordedRequest
 * @typedef {SandboxHandle & { requestsTo: (path: string) => RecordedRequest[] }} TestSandbox
 * @typedef {import('../nodes/BasicsEngage/helpers/failure').ErrorKind} ErrorKind
 * @typedef {{ kind: ErrorKind, httpCode: number | null, description: string }} FailureDetails
 * @typedef {{ [field: string]: unknown, error?: string, details?: FailureDetails }} OutputJson
 * @typedef {Omit<import('n8n-workflow').INodeExecutionData, 'json'> & { json: OutputJson }} OutputItem
 * @typedef {OutputItem & { json: { error: string, details: FailureDetails } }} ErrorItem
 * @typedef {{ toolName: string, toolDescription: string, answer?: string, thrown?: string }} ToolAnswer  answer: JSON
 * @typedef {Awaited<ReturnType<typeof runWorkflow>>} WorkflowRun
 * @typedef {Omit<WorkflowRun, 'success' | 'errors' | 'toolAnswers'> & { success: OutputItem[], errors: ErrorItem[], toolAnswers: ToolAnswer[] }} NodeRun
 */

/**
 * The sandbox of a test file or describe block: started before its first test, reset after each,
 * closed after the last. Use the handle inside tests and hooks.
 * @param {import('./sandbox/server').SandboxOptions} [options]
 * @returns {TestSandbox} plus `requestsTo(path)`: the requests at that path, oldest first
 */
function useSandbox(options) {
	/** @type {SandboxHandle} */
	let started;
	beforeAll(async () => {
		started = await startSandbox(options);
	});
	afterEach(() => started.reset());
	afterAll(() => started.close());
	const own = {
		/** @param {string} path */
		requestsTo: (path) => started.requests.filter((request) => request.path === path),
	};
	// Every other member is the started sandbox's (closures: no `this` to bind).
	return /** @type {TestSandbox} */ (
		new Proxy(own, { get: (target, name) => Reflect.get(name in target ? target : started, name) })
	);
}

/**
 * Runs the BasicsEngage node once in n8n's engine against the sandbox.
 * @param {{ baseUrl: string }} sandbox
 * @param {{ parameters: Record<string, unknown>, items?: Array<Record<string, unknown>>,
 *   onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput',
 *   apiKey?: string, baseUrl?: string | (() => string) } & Partial<import('./harness/n8n').RunWorkflowOptions>} run
 *   further options (toolCalls, retryOnFail, ...) go to runWorkflow as they are
 * @returns {Promise<NodeRun>} a failed item holds `{ error, details }` (transport/report.ts)
 */
async function runNode(
	sandbox,
	{ parameters, items = [{}], onError, apiKey = API_KEY, baseUrl, ...settings },
) {
	const ran = runWorkflow({
		...settings,
		packageDir: PACKAGE_DIR,
		nodeType: NODE_TYPE,
		parameters,
		items,
		onError,
		credentials: {
			[CREDENTIAL_TYPE]:
				typeof baseUrl === 'function'
					? () => ({ apiKey, baseUrl: baseUrl() })
					: { apiKey, baseUrl: baseUrl ?? sandbox.baseUrl },
		},
	});
	return /** @type {Promise<NodeRun>} */ (ran);
}

/**
 * n8n's test of the BasicsEngage credential with this data, as the credential dialog runs it.
 * @param {import('n8n-workflow').ICredentialDataDecryptedObject} data
 */
const runCredentialTest = (data) =>
	testCredential({ credentialType: CREDENTIAL_TYPE, data, packageDir: PACKAGE_DIR });

/** The links of an HTML email, as a mail program reads them: `{ label, url }` per `<a>`. @param {string} html */
function emailLinks(html) {
	return [...html.matchAll(/<a href="([^"]+)"[^>]*>([^<]*)<\/a>/g)].map(([, href, label]) => ({
		url: href.replaceAll('&amp;', '&'),
		label,
	}));
}

/** `count` contacts with distinct addresses. @param {number} count */
function contacts(count, start = 0) {
	return Array.from({ length: count }, (_, offset) => {
		const index = start + offset;
		return {
			email: `contact${index}@customer.test`,
			firstName: `First${index}`,
			lastName: `Last${index}`,
		};
	});
}

/** @param {any} item @returns {number[]} */
function pairedIndexes(item) {
	const paired = Array.isArray(item.pairedItem) ? item.pairedItem : [item.pairedItem];
	return paired.map((/** @type {{ item: number }} */ entry) => entry.item);
}

/**
 * No input item lost or duplicated: each input index paired by exactly one item of both outputs.
 * @param {{ success: any[], errors: any[] }} result @param {number} inputCount
 */
function expectEachInputExactlyOnce(result, inputCount) {
	const seen = [...result.success, ...result.errors].flatMap(pairedIndexes).sort((a, b) => a - b);
	expect(seen).toEqual(Array.from({ length: inputCount }, (_, index) => index));
}

/** The API key appears nowhere a user or a log reader could see it. @param {any} result @param {string} apiKey */
function expectNoSecret(result, apiKey) {
	const error = result.error ?? result.nodeError;
	const visible = JSON.stringify({
		success: result.success,
		errors: result.errors,
		error: error && {
			message: error.message,
			description: error.description,
			context: error.context,
			messages: error.messages,
		},
		logs: result.logs,
	});
	expect(visible).not.toContain(apiKey);
}

// The package loaded again from a copy, with module state of its own: n8n restarted after it died
// (`diesWhen`), or another process of it. The loader requires every file at once, so the copy is
// removed as soon as it is loaded (an exit listener never ran in jest's workers, which are
// killed: copies piled up in the temp folder).
/** @param {{ register?: boolean }} [options] */
async function loadCopy(options) {
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'basicsengage-restarted-'));
	try {
		fs.cpSync(path.join(PACKAGE_DIR, 'dist'), path.join(copy, 'dist'), { recursive: true });
		fs.copyFileSync(path.join(PACKAGE_DIR, 'package.json'), path.join(copy, 'package.json'));
		fs.symlinkSync(path.join(PACKAGE_DIR, 'node_modules'), path.join(copy, 'node_modules'));
		return await loadPackage(copy, options);
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
}

/** After n8n died: its next runs use a fresh copy of the package. */
const restartN8n = async () => void (await loadCopy());

/** A second queue-mode worker: `runNode(sandbox, { loaded: worker, ... })` runs on it. */
const startWorker = () => loadCopy({ register: false });

/** One saved workflow with one node, run again and again (runNode options). */
const savedWorkflow = () => ({
	workflowId: `wf-${randomUUID()}`,
	nodeOverrides: { id: randomUUID() },
});

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `server` on a free loopback port. @param {net.Server} server @returns {Promise<number>} */
async function listen(server) {
	await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
	return /** @type {net.AddressInfo} */ (server.address()).port;
}

/** A port nothing listens on: it was free a moment ago. */
async function freePort() {
	const server = net.createServer();
	const port = await listen(server);
	await new Promise((resolve) => server.close(resolve));
	return port;
}

/** A base URL with the sandbox's path on a loopback port. @param {number} port */
const loopbackBaseUrl = (port) => `http://127.0.0.1:${port}/api/v0/dev`;

/** A base URL where nothing listens. */
const closedBaseUrl = async () => loopbackBaseUrl(await freePort());

/**
 * An HTTP forward proxy on loopback, recording `METHOD url` and the Proxy-Authorization of each
 * request, forwarded to `toPort` on 127.0.0.1 whatever host it names (a remote gateway's path).
 * @param {string | number} toPort
 */
async function startProxy(toPort) {
	/** @type {string[]} */
	const proxied = [];
	/** @type {Array<string | undefined>} `user:password` */
	const credentials = [];
	const server = http.createServer((request, response) => {
		proxied.push(`${request.method} ${request.url}`);
		const basic = /^Basic (.+)$/.exec(request.headers['proxy-authorization'] ?? '')?.[1];
		credentials.push(basic && Buffer.from(basic, 'base64').toString('utf8'));
		const upstream = http.request(
			{
				host: '127.0.0.1',
				port: toPort,
				path: new URL(String(request.url)).pathname,
				method: request.method,
				headers: request.headers,
			},
			(answer) => {
				response.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(response);
			},
		);
		request.pipe(upstream);
	});
	const port = await listen(server);
	return { port, proxied, credentials, close: () => server.close() };
}

/** @param {unknown} value */
const jsonType = (value) =>
	value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

/**
 * A real output has the fields, of the same JSON types, of the schema shipped for its operation
 * (`email/send`), which the editor shows before a first run; the fields of `data` (Send and Wait's
 * answer) are ones the schema names, where it names them.
 * @param {string} operation @param {Record<string, unknown>} json
 */
function expectShippedSchema(operation, json) {
	const file = path.join(SCHEMA_DIR, `${operation}.json`);
	const { properties } = JSON.parse(fs.readFileSync(file, 'utf8'));
	expect(Object.keys(json).sort()).toEqual(Object.keys(properties).sort());
	for (const [field, value] of Object.entries(json)) {
		expect([field, jsonType(value)]).toEqual([field, properties[field].type]);
	}
	for (const [field, value] of Object.entries(/** @type {object} */ (json.data ?? {}))) {
		const named = properties.data.properties ?? { [field]: { type: jsonType(value) } };
		expect([field, jsonType(value)]).toEqual([field, named[field]?.type]);
	}
}

module.exports = {
	...parameters,
	API_KEY,
	CREDENTIAL_TYPE,
	NODE_TYPE,
	PACKAGE_DIR,
	SCHEMA_DIR,
	closedBaseUrl,
	contacts,
	emailLinks,
	expectShippedSchema,
	deduplicationStore,
	delay,
	expectEachInputExactlyOnce,
	expectNoSecret,
	listen,
	loadPackage,
	loopbackBaseUrl,
	pairedIndexes,
	restartN8n,
	startWorker,
	runCredentialTest,
	runNode,
	savedWorkflow,
	startProxy,
	useSandbox,
};
