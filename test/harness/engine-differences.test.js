// @ts-check
'use strict';

/**
 * What n8n 1.x and 2.x do differently that the node's behaviour depends on, pinned down in the
 * real engines (this file runs in both jest projects), with a probe node that returns or throws
 * what a test asks for. Code references are to the installed packages:
 *   1.x: node_modules/n8n-core-v1 (1.122.48), node_modules/n8n-workflow-v1 (1.120.31)
 *   2.x: node_modules/n8n-core (2.41.1), node_modules/n8n-workflow (2.41.0)
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { loadPackage, runWorkflow, internals, getLogs, clearLogs } = require('./n8n');
const { engine } = require('./resolve');

const V1 = engine.major === 1;
const { core, workflowLib } = internals;

const PACKAGE_NAME = 'n8n-nodes-engine-probe';

const NODE_SOURCE = `
'use strict';
const workflow = require('n8n-workflow');
const { NodeApiError, NodeOperationError } = workflow;
globalThis.__probe = { workflowLib: workflow, calls: 0 };

class Probe {
	description = {
		displayName: 'Probe', name: 'probe', group: ['transform'], version: 1, description: 'Engine probe',
		defaults: { name: 'Probe' }, inputs: ['main'], outputs: ['main'],
		properties: ['action', 'json', 'itemError'].map((name) => ({ displayName: name, name, type: 'string', default: '' })),
	};
	async execute() {
		globalThis.__probe.calls++;
		const node = this.getNode();
		const param = (name) => this.getNodeParameter(name, 0);
		if (param('action') === 'item') {
			// The json asked for, paired with input 0, with an item.error 'enumerable' or 'hidden'.
			const item = { json: JSON.parse(param('json')), pairedItem: { item: 0 } };
			const error = new NodeOperationError(node, 'Boom');
			if (param('itemError') === 'enumerable') item.error = error;
			if (param('itemError') === 'hidden') Object.defineProperty(item, 'error', { value: error });
			return [[item]];
		}
		// json 'option': the failure as NodeApiError's option; else assigned after construction.
		const failure = { cause: 'quota-exhausted' };
		const viaOption = param('json') === 'option' ? { failure } : {};
		const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
		const error = new NodeApiError(node, cause, { message: 'Quota used up', httpCode: '429', ...viaOption });
		if (!viaOption.failure) error.failure = failure;
		throw (globalThis.__probe.thrown = error);
	}
}
exports.Probe = Probe;
`;

/** @type {string} */
let probeDir;

beforeAll(async () => {
	probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-probe-'));
	fs.writeFileSync(
		path.join(probeDir, 'package.json'),
		JSON.stringify({
			name: PACKAGE_NAME,
			version: '0.0.1',
			n8n: { n8nNodesApiVersion: 1, nodes: ['Probe.node.js'], credentials: [] },
		}),
	);
	fs.writeFileSync(path.join(probeDir, 'Probe.node.js'), NODE_SOURCE);
	// Outside the repo: give the probe the engine's n8n-workflow, as the n8n server does.
	fs.mkdirSync(path.join(probeDir, 'node_modules'));
	fs.symlinkSync(
		path.dirname(require.resolve(`${engine.workflowPackage}/package.json`)),
		path.join(probeDir, 'node_modules', 'n8n-workflow'),
		'dir',
	);
	await loadPackage(probeDir);
});

afterAll(async () => {
	fs.rmSync(probeDir, { recursive: true, force: true });
});

/** @returns {{ workflowLib: any, calls: number, thrown?: any }} */
const probeState = () => /** @type {any} */ (globalThis).__probe;

const INPUT = { row: 7, email: 'jane@example.com' };

/**
 * @param {import('n8n-workflow').INodeParameters} parameters
 * @param {Partial<import('./n8n').RunWorkflowOptions>} [options]
 */
const runProbe = (parameters, options) =>
	runWorkflow({
		nodeType: `${PACKAGE_NAME}.probe`,
		parameters,
		items: [INPUT],
		onError: 'continueErrorOutput',
		...options,
	});
const STOP = { onError: /** @type {const} */ ('stopWorkflow') };

describe(`engine ${engine.displayName}`, () => {
	test("the node, n8n-core and the harness share one n8n-workflow (and one @n8n/errors); n8n's log lines are captured with their metadata", async () => {
		clearLogs();
		const result = await runProbe({ action: 'item', json: '{}' });
		// Every "the API key is in no log line" check reads these, and would pass on an empty capture.
		expect(getLogs()).toEqual(result.logs);
		expect(result.logs).toContainEqual(
			expect.stringMatching(/Start executing node.*"node":"Node Under Test"/),
		);
		expect(probeState().workflowLib).toBe(workflowLib);
		// n8n-core's errors extend that copy's classes; 1.x's its @n8n/errors' ApplicationError too.
		expect(new core.UnrecognizedNodeTypeError('pkg', 'pkg.type')).toBeInstanceOf(
			workflowLib.UserError,
		);
		if (V1) {
			expect(new core.FileNotFoundError('/nowhere')).toBeInstanceOf(workflowLib.ApplicationError);
		}
	});

	/**
	 * The node's `{ error, details }` items and the error output (handleNodeErrorOutput): 1.x
	 * (n8n-core-v1/dist/execution-engine/workflow-execute.js:1417-1425) routes by json keys only
	 * [error] or [error, message], 2.x (n8n-core/dist/execution-engine/workflow-execute.js:1621-1626)
	 * any of error, message, details; both route an item with `item.error` and merge the paired
	 * input's fields in. Then both replace the json of an item still carrying item.error by
	 * { error: message } (1.x :1058-1071, 2.x normalizeNodeErrors :1108-1120); the routed copy is
	 * built by object spread, which drops a NON-enumerable item.error, so `details` survive.
	 */
	const DETAILS = { kind: 'invalid_request', httpCode: 400, description: 'HTTP 400: bad "to"' };
	const FAILED = { error: 'Boom', details: DETAILS };
	test.each([
		['no item.error: routed on 2.x only', '', V1 ? null : { ...INPUT, ...FAILED }],
		['item.error: routed, json replaced', 'enumerable', { error: 'Boom' }],
		['NON-enumerable item.error: routed, json kept', 'hidden', { ...INPUT, ...FAILED }],
	])('error output routing of { error, details }, %s', async (_case, itemError, routedJson) => {
		const result = await runProbe({ action: 'item', json: JSON.stringify(FAILED), itemError });
		/** @param {any[]} list */
		const items = (list) => list.map(({ json, pairedItem }) => ({ json, pairedItem }));
		const paired = { pairedItem: { item: 0 } };
		expect({ success: items(result.success), errors: items(result.errors) }).toEqual({
			success: routedJson ? [] : [{ json: FAILED, ...paired }],
			errors: routedJson ? [{ json: routedJson, ...paired }] : [],
		});
	});

	test('Retry On Fail: a first success item with `error: null` counts as a failure on 1.x only', async () => {
		// 1.x workflow-execute.js:907-915 `json?.error !== undefined` on the first item of output 0;
		// 2.x workflow-execute.js:1205-1206 `isErrorValue` (not undefined, null or false).
		probeState().calls = 0;
		const json = JSON.stringify({ sent: true, error: null });
		const result = await runProbe(
			{ action: 'item', json },
			{ onError: 'continueRegularOutput', retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
		);
		expect(probeState().calls).toBe(V1 ? 3 : 1);
		expect(result.success).toHaveLength(1);
	});

	test("NodeApiError's `failure` option and its Error `cause` are dropped by n8n-workflow 1.x", async () => {
		// 1.x n8n-workflow-v1/dist/cjs/errors/node-api.error.js:89 does not read `failure`;
		// abstract/execution-base.error.js:16 declares a `cause` class field, which resets the
		// native cause after super(), and :30-31 keep only a non-Error cause.
		const viaOption = await runProbe({ action: 'throw', json: 'option' }, STOP);
		expect(viaOption.error?.failure).toEqual(V1 ? undefined : { cause: 'quota-exhausted' });
		expect(probeState().thrown.cause?.code).toBe(V1 ? undefined : 'ECONNRESET');
		// Assigning after construction works on both (the engine keeps own enumerable fields).
		const assigned = await runProbe({ action: 'throw' }, STOP);
		expect(assigned.error?.failure).toEqual({ cause: 'quota-exhausted' });
		expect(assigned.error?.httpCode).toBe('429');
	});
});
