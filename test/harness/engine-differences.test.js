// @ts-check
'use strict';

/**
 * What a community node sees differently on n8n 1.x and n8n 2.x, pinned down
 * in the real engines (this file runs in both jest projects). Each test says
 * what each engine does; the code references are to the installed packages:
 *
 *   1.x: node_modules/n8n-core-v1 (1.122.48), node_modules/n8n-workflow-v1 (1.120.31)
 *   2.x: node_modules/n8n-core (2.41.1), node_modules/n8n-workflow (2.41.0)
 *
 * The probe node returns whatever item shape a test asks for, so the routing
 * rules of the error output are tested on their own, without an API.
 */

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { loadPackage, runWorkflow, internals } = require('./n8n');
const { engine } = require('./resolve');

const V1 = engine.major === 1;
const { core, workflowLib } = internals;

const PACKAGE_NAME = 'n8n-nodes-engine-probe';
const NODE_TYPE = `${PACKAGE_NAME}.probe`;

const NODE_SOURCE = `
'use strict';
const workflow = require('n8n-workflow');
const { NodeApiError, NodeOperationError } = workflow;
globalThis.__probe = { workflowLib: workflow, calls: 0 };

const DETAILS = { kind: 'invalid_request', httpCode: 400, description: 'HTTP 400: bad "to"' };

/** One output item for the first input item, in the shape the test names. */
function shapeItem(node, shape) {
	const pairedItem = { item: 0 };
	switch (shape) {
		case 'error': return { json: { error: 'Boom' }, pairedItem };
		case 'error+message': return { json: { error: 'Boom', message: 'It failed' }, pairedItem };
		case 'error+details': return { json: { error: 'Boom', details: DETAILS }, pairedItem };
		case 'error+message+details':
			return { json: { error: 'Boom', message: 'It failed', details: DETAILS }, pairedItem };
		case 'error:object': return { json: { error: { message: 'Boom', ...DETAILS } }, pairedItem };
		case 'error+message:object': return { json: { error: 'Boom', message: DETAILS }, pairedItem };
		case 'item.error':
			return { json: { error: 'Boom', details: DETAILS }, error: new NodeOperationError(node, 'Boom'), pairedItem };
		case 'item.error:hidden':
		case 'item.error:hidden,unpaired': {
			const item = { json: { error: 'Boom', details: DETAILS } };
			if (shape === 'item.error:hidden') item.pairedItem = pairedItem;
			Object.defineProperty(item, 'error', { value: new NodeOperationError(node, 'Boom'), enumerable: false });
			return item;
		}
		case 'success+error:null': return { json: { sent: true, error: null }, pairedItem };
		default: throw new Error('unknown shape ' + shape);
	}
}

async function probe() {
	globalThis.__probe.calls++;
	const node = this.getNode();
	const action = this.getNodeParameter('action', 0);
	if (action === 'shape') return [[shapeItem(node, this.getNodeParameter('shape', 0))]];
	if (action === 'throwFailureOption' || action === 'throwFailureAssigned') {
		const cause = new Error('socket hang up');
		cause.code = 'ECONNRESET';
		const options = { message: 'Quota used up', httpCode: '429', itemIndex: 0 };
		if (action === 'throwFailureOption') options.failure = { cause: 'quota-exhausted' };
		const error = new NodeApiError(node, cause, options);
		if (action === 'throwFailureAssigned') error.failure = { cause: 'quota-exhausted' };
		globalThis.__probe.thrown = error;
		throw error;
	}
	if (action === 'statusConfig') {
		try {
			const response = await this.helpers.httpRequest({
				url: this.getNodeParameter('url', 0),
				returnFullResponse: true,
				ignoreHttpStatusErrors: { ignore: true, except: [401] },
			});
			return [[{ json: { threw: false, statusCode: response.statusCode }, pairedItem: { item: 0 } }]];
		} catch (error) {
			return [[{ json: { threw: true, status: error.response?.status }, pairedItem: { item: 0 } }]];
		}
	}
	throw new Error('unknown action ' + action);
}

class Probe {
	constructor() {
		this.description = {
			displayName: 'Probe',
			name: 'probe',
			group: ['transform'],
			version: 1,
			description: 'Engine probe',
			defaults: { name: 'Probe' },
			inputs: ['main'],
			outputs: ['main'],
			properties: [
				{ displayName: 'Action', name: 'action', type: 'string', default: 'shape' },
				{ displayName: 'Shape', name: 'shape', type: 'string', default: 'error' },
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
			],
		};
	}
	async execute() {
		return await probe.call(this);
	}
}
exports.Probe = Probe;
`;

/** @type {string} */
let probeDir;
/** @type {http.Server} */
let server;
/** @type {string} */
let serverUrl;

beforeAll(async () => {
	probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-probe-'));
	const write = (/** @type {string} */ rel, /** @type {string} */ content) => {
		fs.mkdirSync(path.dirname(path.join(probeDir, rel)), { recursive: true });
		fs.writeFileSync(path.join(probeDir, rel), content);
	};
	write(
		'package.json',
		JSON.stringify({
			name: PACKAGE_NAME,
			version: '0.0.1',
			n8n: { n8nNodesApiVersion: 1, nodes: ['dist/Probe.node.js'], credentials: [] },
		}),
	);
	write('dist/Probe.node.js', NODE_SOURCE);
	// Outside the repo: give the probe the engine's n8n-workflow, as the n8n
	// server does (on 1.x the jest project maps it anyway).
	fs.mkdirSync(path.join(probeDir, 'node_modules'));
	fs.symlinkSync(
		path.dirname(require.resolve(`${engine.workflowPackage}/package.json`)),
		path.join(probeDir, 'node_modules', 'n8n-workflow'),
		'dir',
	);
	await loadPackage(probeDir);

	server = http.createServer((_req, res) => {
		res.writeHead(401, { 'content-type': 'application/json' });
		res.end(JSON.stringify({ message: 'Unauthorized' }));
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
	serverUrl = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/`;
});

afterAll(async () => {
	await new Promise((resolve) => server.close(() => resolve(undefined)));
	fs.rmSync(probeDir, { recursive: true, force: true });
});

/** @returns {{ workflowLib: any, calls: number, thrown?: any }} */
const probeState = () => /** @type {any} */ (globalThis).__probe;

/**
 * @param {Record<string, unknown>} parameters
 * @param {Partial<import('./n8n').RunWorkflowOptions>} [options]
 */
function runProbe(parameters, options = {}) {
	return runWorkflow({
		nodeType: NODE_TYPE,
		parameters,
		items: [{ row: 7, email: 'jane@example.com' }],
		onError: 'continueErrorOutput',
		...options,
	});
}

const INPUT = { row: 7, email: 'jane@example.com' };
const DETAILS = { kind: 'invalid_request', httpCode: 400, description: 'HTTP 400: bad "to"' };

describe(`engine ${engine.displayName}`, () => {
	test('the node, n8n-core and the harness share one n8n-workflow (and one @n8n/errors)', async () => {
		await runProbe({ shape: 'error' });
		// What the node got from require('n8n-workflow') is the engine's copy...
		expect(probeState().workflowLib).toBe(workflowLib);
		// ...and n8n-core's own n8n-workflow is that copy too (its errors extend it).
		expect(new core.UnrecognizedNodeTypeError('pkg', 'pkg.type')).toBeInstanceOf(
			workflowLib.UserError,
		);
		if (V1) {
			// n8n-core 1.x extends @n8n/errors' ApplicationError directly (dist/errors/abstract/
			// filesystem.error.js:5); n8n-workflow 1.x re-exports it.
			expect(new core.FileNotFoundError('/nowhere')).toBeInstanceOf(workflowLib.ApplicationError);
		}
	});

	test('n8n-workflow exports the node imports at run time exist', () => {
		for (const name of ['sleep', 'NodeConnectionTypes', 'NodeApiError', 'NodeOperationError']) {
			expect(workflowLib[name]).toBeDefined();
		}
		expect(workflowLib.NodeConnectionTypes.Main).toBe('main');
	});

	/**
	 * handleNodeErrorOutput: an item goes to the error output when `item.error` is set, or
	 *  1.x (n8n-core-v1/dist/execution-engine/workflow-execute.js:1417-1425): json.error is truthy
	 *      and the json keys are exactly [error] or [error, message] (message truthy too);
	 *  2.x (n8n-core/dist/execution-engine/workflow-execute.js:1621-1626): json.error is truthy
	 *      and every json key is one of error, message, details.
	 * Routed items get the paired input item's fields merged under their own
	 * (1.x :1443-1448, 2.x :1645-1650).
	 */
	describe('error output routing of json-only failed items', () => {
		const routes = {
			error: { v1: true, v2: true },
			'error+message': { v1: true, v2: true },
			'error+details': { v1: false, v2: true },
			'error+message+details': { v1: false, v2: true },
			'error:object': { v1: true, v2: true },
			'error+message:object': { v1: true, v2: true },
		};
		test.each(Object.entries(routes))('%s', async (shape, expected) => {
			const result = await runProbe({ shape });
			const routed = V1 ? expected.v1 : expected.v2;
			expect(result.success).toHaveLength(routed ? 0 : 1);
			expect(result.errors).toHaveLength(routed ? 1 : 0);
			if (routed) {
				// Merged with the input item's fields.
				expect(result.errors[0].json).toMatchObject(INPUT);
			} else {
				// Left on the main output as the node returned it: not merged.
				expect(result.success[0].json).not.toHaveProperty('row');
			}
		});
	});

	test('item.error routes on both, but the clean-up replaces json with { error: message }', async () => {
		// 1.x n8n-core-v1/dist/execution-engine/workflow-execute.js:1058-1071 (after the routing
		// at :933), 2.x n8n-core/dist/execution-engine/workflow-execute.js:1108-1120
		// (normalizeNodeErrors, called at :1291 after the routing at :970).
		const result = await runProbe({ shape: 'item.error' });
		expect(result.errors).toHaveLength(1);
		expect(result.errors[0].json).toEqual({ error: 'Boom' });
	});

	test('a failed-item shape that routes on both and keeps the details and the input fields', async () => {
		// `error` stays the message string; the machine-readable details ride in `message`,
		// the one other key 1.x lets through.
		const asMessage = await runProbe({ shape: 'error+message:object' });
		expect(asMessage.success).toEqual([]);
		expect(asMessage.errors).toEqual([
			{ json: { ...INPUT, error: 'Boom', message: DETAILS }, pairedItem: { item: 0 } },
		]);

		// Or everything inside `error` (the only key): then `error` is an object.
		const asError = await runProbe({ shape: 'error:object' });
		expect(asError.success).toEqual([]);
		expect(asError.errors).toEqual([
			{ json: { ...INPUT, error: { message: 'Boom', ...DETAILS } }, pairedItem: { item: 0 } },
		]);
	});

	test('the same { error, details } json with a NON-enumerable item.error routes on both and survives', async () => {
		// Routing reads item.error (1.x :1417, 2.x :1621); the routed copy is built with object
		// spread (`{ ...item, json }`, 1.x :1443, 2.x :1645), which drops a non-enumerable
		// property, so the clean-up no longer sees item.error and keeps the json.
		const hidden = await runProbe({ shape: 'item.error:hidden' });
		expect(hidden.success).toEqual([]);
		expect(hidden.errors).toEqual([
			{ json: { ...INPUT, error: 'Boom', details: DETAILS }, pairedItem: { item: 0 } },
		]);
		expect(hidden.errors[0].error).toBeUndefined();

		// Only for items the engine copies: an item without pairedItem (or whose paired input
		// cannot be found) is routed as is (1.x :1432-1433 and :1439-1440, 2.x :1634-1635 and
		// :1641-1642), keeps its hidden error and loses its json.
		const unpaired = await runProbe({ shape: 'item.error:hidden,unpaired' });
		expect(unpaired.errors).toHaveLength(1);
		expect(unpaired.errors[0].json).toEqual({ error: 'Boom' });
	});

	test('Retry On Fail: a first success item with `error: null` counts as a failure on 1.x only', async () => {
		// 1.x workflow-execute.js:907-915 `json?.error !== undefined` on the first item of output 0;
		// 2.x workflow-execute.js:1205-1206 `isErrorValue` (not undefined, null or false).
		probeState().calls = 0;
		const result = await runProbe(
			{ shape: 'success+error:null' },
			{ onError: 'continueRegularOutput', retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(probeState().calls).toBe(V1 ? 3 : 1);
		expect(result.success).toHaveLength(1);
	});

	test("NodeApiError's `failure` option and its Error `cause` are dropped by n8n-workflow 1.x", async () => {
		// 1.x n8n-workflow-v1/dist/cjs/errors/node-api.error.js:89 does not read `failure`;
		// abstract/execution-base.error.js:16 declares a `cause` class field, which resets the
		// native cause after super(), and :30-31 keep only a non-Error cause.
		const viaOption = await runProbe({ action: 'throwFailureOption' }, { onError: 'stopWorkflow' });
		expect(viaOption.error.failure).toEqual(V1 ? undefined : { cause: 'quota-exhausted' });
		const thrown = probeState().thrown;
		expect(thrown.cause?.code).toBe(V1 ? undefined : 'ECONNRESET');

		// Assigning after construction works on both (the engine keeps own enumerable fields).
		const assigned = await runProbe({ action: 'throwFailureAssigned' }, { onError: 'stopWorkflow' });
		expect(assigned.error.failure).toEqual({ cause: 'quota-exhausted' });
		expect(assigned.error.httpCode).toBe('429');
	});

	test('ignoreHttpStatusErrors { ignore: true, except: [401] }: 2.x throws for 401, 1.x ignores every status', async () => {
		// 1.x n8n-core-v1/.../utils/request-helper-functions.js:449-451 (any truthy value:
		// validateStatus = () => true); 2.x @n8n/backend-network http/axios/request.js:79-83.
		const result = await runProbe({ action: 'statusConfig', url: serverUrl });
		expect(result.success[0].json).toEqual(
			V1 ? { threw: false, statusCode: 401 } : { threw: true, status: 401 },
		);
	});
});
