// @ts-check
'use strict';

/**
 * Fixture runner: a test that is a workflow exported from the n8n editor plus what must happen
 * when it runs. Each folder under test/fixtures/ holds
 *
 *   workflow.json  the export, unchanged (Download in the editor, or select all + copy)
 *   expect.json    the sandbox to run it against, the items pinned on its nodes, and the requests
 *                  the sandbox must see, the items each output must hold, the error, the state
 *
 * The workflow runs in n8n's engine through ./n8n.js runWorkflowFile (a manual "Execute
 * workflow" run); every BasicsEngage credential it names is bound to a fresh sandbox. The format
 * is documented in test/fixtures/README.md; test/fixtures.test.js runs every folder.
 */

const fs = require('node:fs');
const path = require('node:path');

const { runWorkflowFile } = require('./n8n');
const { startSandbox } = require('../sandbox/server');

const FIXTURES_DIR = path.resolve(__dirname, '..', 'fixtures');
const PACKAGE_DIR = path.resolve(__dirname, '..', '..');
const CREDENTIAL_TYPE = 'basicsEngageApi';
const DEFAULT_API_KEY = 'be_sandbox_demo_key';

const EXPECT_KEYS = [
	'description',
	'sandbox',
	'credential',
	'pinData',
	'startNode',
	'requests',
	'executedNodes',
	'outputs',
	'error',
	'state',
];
const SANDBOX_KEYS = ['options', 'faults'];
const REQUEST_KEYS = ['method', 'path', 'headers', 'body'];
const ERROR_KEYS = ['node', 'name', 'message', 'description', 'httpCode', 'itemIndex', 'failure'];
const STATE_KEYS = ['emails', 'profiles', 'lists', 'campaigns', 'campaignSends'];

/**
 * @typedef {object} FixtureExpectation  the content of expect.json
 * @property {string} [description]
 * @property {{ options?: Record<string, unknown>, faults?: unknown[] }} [sandbox]
 * @property {{ apiKey?: string }} [credential]
 * @property {Record<string, unknown[]>} [pinData]
 * @property {string} [startNode]
 * @property {Array<Record<string, unknown>>} [requests]
 * @property {string[]} [executedNodes]
 * @property {Record<string, unknown>} [outputs]
 * @property {Record<string, unknown>} [error]
 * @property {Record<string, unknown>} [state]
 */

/** Names of the fixture folders, sorted. */
function listFixtures() {
	return fs
		.readdirSync(FIXTURES_DIR, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.map((entry) => entry.name)
		.sort();
}

/** @param {string} file */
function readJson(file) {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch (error) {
		throw new Error(
			`${path.relative(process.cwd(), file)}: ${/** @type {Error} */ (error).message}`,
		);
	}
}

/**
 * @param {Record<string, unknown>} object
 * @param {string[]} allowed
 * @param {string} where
 */
function checkKeys(object, allowed, where) {
	const unknown = Object.keys(object).filter((key) => !allowed.includes(key));
	if (unknown.length > 0) {
		throw new Error(`${where}: unknown key ${unknown.join(', ')} (known: ${allowed.join(', ')})`);
	}
}

/**
 * @param {string} dir a fixture folder
 * @returns {{ workflow: any, expected: FixtureExpectation }}
 */
function readFixture(dir) {
	const name = path.basename(dir);
	const workflow = readJson(path.join(dir, 'workflow.json'));
	/** @type {FixtureExpectation} */
	const expected = readJson(path.join(dir, 'expect.json'));
	checkKeys(expected, EXPECT_KEYS, `${name}/expect.json`);
	checkKeys(expected.sandbox ?? {}, SANDBOX_KEYS, `${name}/expect.json sandbox`);
	checkKeys(expected.error ?? {}, ERROR_KEYS, `${name}/expect.json error`);
	checkKeys(expected.state ?? {}, STATE_KEYS, `${name}/expect.json state`);
	(expected.requests ?? []).forEach((request, index) =>
		checkKeys(request, REQUEST_KEYS, `${name}/expect.json requests[${index}]`),
	);
	const nodeNames = new Set((workflow.nodes ?? []).map((/** @type {any} */ node) => node.name));
	for (const node of Object.keys(expected.outputs ?? {})) {
		if (!nodeNames.has(node)) {
			throw new Error(`${name}/expect.json outputs: the workflow has no node "${node}"`);
		}
	}
	if (!expected.requests && !expected.outputs && !expected.error && !expected.state) {
		throw new Error(`${name}/expect.json: nothing to check (requests, outputs, error or state)`);
	}
	return { workflow, expected };
}

// ---------------------------------------------------------------------------
// Placeholders: strings in expect.json that stand for a kind of value
// ---------------------------------------------------------------------------

const ASYMMETRIC = Symbol.for('jest.asymmetricMatcher');

/**
 * A jest asymmetric matcher that prints as the placeholder written in expect.json, so a diff
 * reads like the file.
 */
class Placeholder {
	/**
	 * @param {string} text the placeholder as written
	 * @param {(value: unknown) => boolean} test
	 * @param {() => string} [describe] what it stands for now (a bound capture)
	 */
	constructor(text, test, describe) {
		this.$$typeof = ASYMMETRIC;
		this.text = text;
		this.test = test;
		this.describe = describe;
	}

	/** @param {unknown} value */
	asymmetricMatch(value) {
		return this.test(value);
	}

	toString() {
		return 'Placeholder';
	}

	toAsymmetricMatcher() {
		const now = this.describe?.();
		return now ? `${JSON.stringify(this.text)} (${now})` : JSON.stringify(this.text);
	}
}

/** @type {Record<string, (value: unknown) => boolean>} */
const KINDS = {
	'<any>': (value) => value !== undefined,
	'<any string>': (value) => typeof value === 'string',
	'<any number>': (value) => typeof value === 'number',
	'<any object>': (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
	'<any array>': (value) => Array.isArray(value),
};

/**
 * Replaces the placeholders in a value from expect.json by matchers:
 *   "<any>" (anything but absent), "<any string>", "<any number>", "<any object>", "<any array>",
 *   "<match /regex/flags>" (a string the regex matches),
 *   "<$name>" (a capture: anything the first time, the same value at every other "<$name>").
 * @param {unknown} value
 * @param {Map<string, unknown>} captures shared by everything one fixture compares
 * @returns {unknown}
 */
function withPlaceholders(value, captures) {
	if (Array.isArray(value)) return value.map((entry) => withPlaceholders(entry, captures));
	if (value && typeof value === 'object') {
		return Object.fromEntries(
			Object.entries(value).map(([key, entry]) => [key, withPlaceholders(entry, captures)]),
		);
	}
	if (typeof value !== 'string') return value;
	const kind = KINDS[value];
	if (kind) return new Placeholder(value, kind);
	const regex = /^<match \/(.*)\/([dgimsuvy]*)>$/s.exec(value);
	if (regex) {
		const pattern = new RegExp(regex[1], regex[2]);
		return new Placeholder(value, (actual) => typeof actual === 'string' && pattern.test(actual));
	}
	const capture = /^<\$([A-Za-z_][\w-]*)>$/.exec(value);
	if (capture) {
		const name = capture[1];
		return new Placeholder(
			value,
			(actual) => {
				if (actual === undefined) return false;
				if (!captures.has(name)) captures.set(name, structuredClone(actual));
				return JSON.stringify(captures.get(name)) === JSON.stringify(actual);
			},
			() => (captures.has(name) ? `= ${JSON.stringify(captures.get(name))}` : ''),
		);
	}
	return value;
}

// ---------------------------------------------------------------------------
// What a run did, in the shape of expect.json
// ---------------------------------------------------------------------------

/** @param {any} item */
function itemView(item) {
	return {
		json: item.json,
		...(item.pairedItem !== undefined && { pairedItem: item.pairedItem }),
		...(item.binary !== undefined && { binary: item.binary }),
	};
}

/**
 * @param {Record<string, string | string[] | undefined>} headers
 * @param {string[]} names
 */
function pickHeaders(headers, names) {
	return Object.fromEntries(names.map((name) => [name, headers[name.toLowerCase()] ?? null]));
}

/**
 * The recorded requests, each with the fields its expected counterpart names (extra requests
 * show method, path and body).
 * @param {import('../sandbox/server').RecordedRequest[]} requests
 * @param {Array<Record<string, any>>} expected
 */
function requestsView(requests, expected) {
	return requests.map((request, index) => {
		const wanted = expected[index] ?? { method: 1, path: 1, body: 1 };
		/** @type {Record<string, unknown>} */
		const view = {};
		for (const key of REQUEST_KEYS) {
			if (!(key in wanted)) continue;
			view[key] =
				key === 'headers'
					? pickHeaders(request.headers, Object.keys(wanted.headers ?? {}))
					: /** @type {any} */ (request)[key];
		}
		return view;
	});
}

/** @param {any} error */
function errorView(error) {
	if (!error) return undefined;
	/** @type {Record<string, unknown>} */
	const view = {
		node: error.node?.name,
		name: error.name,
		message: error.message,
		description: error.description,
		httpCode: error.httpCode,
		itemIndex: error.context?.itemIndex,
		failure: error.failure,
	};
	return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}

/** @param {import('../sandbox/server').SandboxState} state */
function stateView(state) {
	return {
		emails: state.emails,
		profiles: [...state.profiles.values()],
		lists: [...state.lists.values()].map((list) => ({
			...list,
			profiles: [...list.profiles.values()],
		})),
		campaigns: [...state.campaigns.values()],
		campaignSends: state.campaignSends,
	};
}

/**
 * @param {Record<string, unknown>} object
 * @param {string[]} keys
 */
const pick = (object, keys) =>
	Object.fromEntries(keys.filter((key) => key in object).map((key) => [key, object[key]]));

/**
 * Runs one fixture against a fresh sandbox.
 * @param {string} dir a fixture folder, e.g. path.join(FIXTURES_DIR, name)
 * @returns {Promise<{ actual: Record<string, unknown>, expected: Record<string, unknown>,
 *   apiKey: string, visible: string }>} `actual` and `expected` have the same keys, for one
 *   toEqual; `visible` is everything a user or a log reader sees (outputs, error, logs)
 */
async function runFixture(dir) {
	const name = path.basename(dir);
	const { workflow, expected } = readFixture(dir);
	const sandbox = await startSandbox(/** @type {any} */ (expected.sandbox?.options ?? {}));
	try {
		if (expected.sandbox?.faults)
			sandbox.injectFaults(/** @type {any} */ (expected.sandbox.faults));
		const apiKey = expected.credential?.apiKey ?? DEFAULT_API_KEY;
		const result = await runWorkflowFile(workflow, {
			packageDir: PACKAGE_DIR,
			credentials: { [CREDENTIAL_TYPE]: { apiKey, baseUrl: sandbox.baseUrl } },
			pinData: /** @type {any} */ (expected.pinData),
			startNode: expected.startNode,
		});

		/** @type {Record<string, unknown>} */
		const actual = {};
		/** @type {Record<string, unknown>} */
		const wanted = {};
		if (expected.requests) {
			actual.requests = requestsView(sandbox.requests, expected.requests);
			wanted.requests = expected.requests;
		}
		if (expected.executedNodes) {
			actual.executedNodes = result.executedNodes;
			wanted.executedNodes = expected.executedNodes;
		}
		if (expected.outputs) {
			actual.outputs = Object.fromEntries(
				Object.keys(expected.outputs).map((node) => {
					const runs = result.runData[node]?.length ?? 0;
					if (runs > 1)
						throw new Error(
							`${name}: node "${node}" ran ${runs} times; only one run can be checked`,
						);
					const outputs = result.outputs[node];
					return [node, outputs ? outputs.map((items) => items.map(itemView)) : null];
				}),
			);
			wanted.outputs = expected.outputs;
		}
		const error = errorView(result.error);
		actual.error = error && expected.error ? pick(error, Object.keys(expected.error)) : error;
		wanted.error = expected.error;
		if (expected.state) {
			actual.state = pick(stateView(sandbox.state), Object.keys(expected.state));
			wanted.state = expected.state;
		}

		const visible = JSON.stringify({
			outputs: result.outputs,
			error: result.error && {
				...errorView(result.error),
				context: result.error.context,
				messages: result.error.messages,
			},
			logs: result.logs,
		});
		return {
			actual,
			expected: /** @type {Record<string, unknown>} */ (withPlaceholders(wanted, new Map())),
			apiKey,
			visible,
		};
	} finally {
		await sandbox.close();
	}
}

module.exports = {
	FIXTURES_DIR,
	listFixtures,
	readFixture,
	runFixture,
	withPlaceholders,
};
