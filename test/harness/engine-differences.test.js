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
 * The probe node returns whatever item a test asks for, so the routing rules of
 * the error output are tested on their own, without an API.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { loadPackage, runWorkflow, internals, getLogs, clearLogs } = require('./n8n');
const { engine } = require('./resolve');
const { startSandbox } = require('../sandbox/server');

const V1 = engine.major === 1;
const { core, workflowLib } = internals;

const PACKAGE_NAME = 'n8n-nodes-engine-probe';

const NODE_SOURCE = `
'use strict';
const workflow = require('n8n-workflow');
const { NodeApiError, NodeOperationError } = workflow;
globalThis.__probe = { workflowLib: workflow, calls: 0 };

/** action 'item': the json asked for, paired with input 0 unless 'unpaired', with an item.error
 *  that is 'enumerable' or 'hidden' (non-enumerable) when asked. */
async function probe() {
	globalThis.__probe.calls++;
	const node = this.getNode();
	const param = (name) => this.getNodeParameter(name, 0);
	const action = param('action');
	if (action === 'item') {
		const item = { json: JSON.parse(param('json')) };
		const itemError = param('itemError');
		if (!itemError.includes('unpaired')) item.pairedItem = { item: 0 };
		const error = new NodeOperationError(node, 'Boom');
		if (itemError === 'enumerable') item.error = error;
		if (itemError.startsWith('hidden')) Object.defineProperty(item, 'error', { value: error, enumerable: false });
		return [[item]];
	}
	if (action === 'throwFailure') {
		// json 'option': the failure as NodeApiError's option; else assigned after construction.
		const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
		const failure = { cause: 'quota-exhausted' };
		const viaOption = param('json') === 'option' ? { failure } : {};
		const error = new NodeApiError(node, cause, { message: 'Quota used up', httpCode: '429', itemIndex: 0, ...viaOption });
		if (!viaOption.failure) error.failure = failure;
		throw (globalThis.__probe.thrown = error);
	}
	if (action === 'statusConfig') {
		const ignoreHttpStatusErrors = { ignore: true, except: [401] };
		const json = await this.helpers.httpRequest({ method: 'POST', url: param('url'), returnFullResponse: true, ignoreHttpStatusErrors }).then(
			(response) => ({ threw: false, statusCode: response.statusCode }),
			(error) => ({ threw: true, status: error.response?.status }),
		);
		return [[{ json, pairedItem: { item: 0 } }]];
	}
	throw new Error('unknown action ' + action);
}

class Probe {
	description = {
		displayName: 'Probe', name: 'probe', group: ['transform'], version: 1, description: 'Engine probe',
		defaults: { name: 'Probe' }, inputs: ['main'], outputs: ['main'],
		properties: ['action', 'json', 'itemError', 'url'].map((name) => ({ displayName: name, name, type: 'string', default: '' })),
	};
	async execute() {
		return await probe.call(this);
	}
}
exports.Probe = Probe;
`;

/** @type {string} */
let probeDir;
/** Answers a request without a key 401. @type {import('../sandbox/server').SandboxHandle} */
let sandbox;

beforeAll(async () => {
	probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-probe-'));
	fs.mkdirSync(path.join(probeDir, 'dist'));
	fs.writeFileSync(
		path.join(probeDir, 'package.json'),
		JSON.stringify({
			name: PACKAGE_NAME,
			version: '0.0.1',
			n8n: { n8nNodesApiVersion: 1, nodes: ['dist/Probe.node.js'], credentials: [] },
		}),
	);
	fs.writeFileSync(path.join(probeDir, 'dist/Probe.node.js'), NODE_SOURCE);
	// Outside the repo: give the probe the engine's n8n-workflow, as the n8n
	// server does (on 1.x the jest project maps it anyway).
	fs.mkdirSync(path.join(probeDir, 'node_modules'));
	fs.symlinkSync(
		path.dirname(require.resolve(`${engine.workflowPackage}/package.json`)),
		path.join(probeDir, 'node_modules', 'n8n-workflow'),
		'dir',
	);
	await loadPackage(probeDir);

	sandbox = await startSandbox();
});

afterAll(async () => {
	await sandbox.close();
	fs.rmSync(probeDir, { recursive: true, force: true });
});

/** @returns {{ workflowLib: any, calls: number, thrown?: any }} */
const probeState = () => /** @type {any} */ (globalThis).__probe;

const INPUT = { row: 7, email: 'jane@example.com' };
const DETAILS = { kind: 'invalid_request', httpCode: 400, description: 'HTTP 400: bad "to"' };

/**
 * @param {Record<string, unknown>} parameters
 * @param {Partial<import('./n8n').RunWorkflowOptions>} [options]
 */
function runProbe(parameters, options = {}) {
	return runWorkflow({
		nodeType: `${PACKAGE_NAME}.probe`,
		parameters,
		items: [INPUT],
		onError: 'continueErrorOutput',
		...options,
	});
}

/** The probe returns this json (and item.error, when given) for input item 0. */
const runItem = (/** @type {object} */ json, itemError = '', options = {}) =>
	runProbe({ action: 'item', json: JSON.stringify(json), itemError }, options);

describe(`engine ${engine.displayName}`, () => {
	test("the node, n8n-core and the harness share one n8n-workflow (and one @n8n/errors), with the exports the node imports at run time; n8n's log lines are captured with their metadata", async () => {
		clearLogs();
		const result = await runItem({ error: 'Boom' });
		// n8n's log lines are captured with their metadata: every "the API key is in no log line"
		// check reads them, and would pass on an empty capture.
		expect(getLogs().slice(-result.logs.length)).toEqual(result.logs);
		expect(result.logs).toContainEqual(
			expect.stringMatching(/Start executing node.*"node":"Node Under Test"/),
		);
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
	 * (1.x :1443-1448, 2.x :1645-1650); an item left on the main output is not merged.
	 * After routing, both replace the json of an item still carrying `item.error` with
	 * { error: message } (1.x :1058-1071 after the routing at :933; 2.x normalizeNodeErrors
	 * :1108-1120, called at :1291 after the routing at :970). The routed copy is built with
	 * object spread (`{ ...item, json }`), which drops a NON-enumerable item.error, so the json
	 * survives; an item without pairedItem (or whose paired input cannot be found) is routed as
	 * is (1.x :1432-1433 and :1439-1440, 2.x :1634-1635 and :1641-1642) and keeps item.error.
	 */
	const BOOM = { error: 'Boom' };
	const MESSAGE = { error: 'Boom', message: 'It failed' };
	const WITH_DETAILS = { error: 'Boom', details: DETAILS };
	// [case, json the node returns, item.error, routed on [1.x, 2.x], json on the error output
	// (null: the input's fields merged under the node's json; BOOM: item.error was kept)]
	test.each([
		['{ error }', BOOM, '', [true, true], null],
		['{ error, message }', MESSAGE, '', [true, true], null],
		['{ error, details }', WITH_DETAILS, '', [false, true], null],
		['{ error, message, details }', { ...MESSAGE, details: DETAILS }, '', [false, true], null],
		// Two shapes that route on both and keep the details and the input fields: everything
		// inside `error` (then `error` is an object), or the details in `message`.
		['{ error: object }', { error: { message: 'Boom', ...DETAILS } }, '', [true, true], null],
		['{ error, message: object }', { error: 'Boom', message: DETAILS }, '', [true, true], null],
		['item.error: the clean-up replaces json', WITH_DETAILS, 'enumerable', [true, true], BOOM],
		['NON-enumerable item.error: json survives', WITH_DETAILS, 'hidden', [true, true], null],
		['NON-enumerable, unpaired: json lost', WITH_DETAILS, 'hidden,unpaired', [true, true], BOOM],
	])('error output routing: %s', async (_case, json, itemError, [v1, v2], errorJson) => {
		const result = await runItem(json, itemError);
		const routed = V1 ? v1 : v2;
		/** Each item's json and pairedItem, and whether it still has item.error (enumerable or not). */
		const items = (/** @type {any[]} */ list) =>
			list.map((item) => ({
				json: item.json,
				pairedItem: item.pairedItem,
				error: 'error' in item,
			}));
		const pairedItem = { item: 0 };
		const routedJson = errorJson ?? { ...INPUT, ...json };
		expect({ success: items(result.success), errors: items(result.errors) }).toEqual({
			success: routed ? [] : [{ json, pairedItem, error: false }],
			errors: routed ? [{ json: routedJson, pairedItem, error: errorJson === BOOM }] : [],
		});
	});

	test('Retry On Fail: a first success item with `error: null` counts as a failure on 1.x only', async () => {
		// 1.x workflow-execute.js:907-915 `json?.error !== undefined` on the first item of output 0;
		// 2.x workflow-execute.js:1205-1206 `isErrorValue` (not undefined, null or false).
		probeState().calls = 0;
		const result = await runItem({ sent: true, error: null }, '', {
			onError: 'continueRegularOutput',
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 0,
		});
		expect(probeState().calls).toBe(V1 ? 3 : 1);
		expect(result.success).toHaveLength(1);
	});

	test("NodeApiError's `failure` option and its Error `cause` are dropped by n8n-workflow 1.x", async () => {
		// 1.x n8n-workflow-v1/dist/cjs/errors/node-api.error.js:89 does not read `failure`;
		// abstract/execution-base.error.js:16 declares a `cause` class field, which resets the
		// native cause after super(), and :30-31 keep only a non-Error cause.
		const viaOption = await runProbe(
			{ action: 'throwFailure', json: 'option' },
			{ onError: 'stopWorkflow' },
		);
		expect(viaOption.error.failure).toEqual(V1 ? undefined : { cause: 'quota-exhausted' });
		expect(probeState().thrown.cause?.code).toBe(V1 ? undefined : 'ECONNRESET');

		// Assigning after construction works on both (the engine keeps own enumerable fields).
		const assigned = await runProbe({ action: 'throwFailure' }, { onError: 'stopWorkflow' });
		expect(assigned.error.failure).toEqual({ cause: 'quota-exhausted' });
		expect(assigned.error.httpCode).toBe('429');
	});

	test('ignoreHttpStatusErrors { ignore: true, except: [401] }: 2.x throws for 401, 1.x ignores every status', async () => {
		// 1.x n8n-core-v1/.../utils/request-helper-functions.js:449-451 (any truthy value:
		// validateStatus = () => true); 2.x @n8n/backend-network http/axios/request.js:79-83.
		const result = await runProbe({ action: 'statusConfig', url: `${sandbox.baseUrl}/email/send` });
		expect(result.success[0].json).toEqual(
			V1 ? { threw: false, statusCode: 401 } : { threw: true, status: 401 },
		);
	});
});
