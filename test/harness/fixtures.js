// @ts-check
'use strict';

// A test that is a workflow exported from the n8n editor (workflow.json) plus what must happen
// when it runs against a fresh sandbox (expect.json, format in test/fixtures/README.md).

const fs = require('node:fs');
const path = require('node:path');

const { runWorkflowFile } = require('./n8n');
const { coreRequire } = require('./resolve');
const { startSandbox } = require('../sandbox/server');
const { API_KEY, CREDENTIAL_TYPE, PACKAGE_DIR } = require('../support');

const { pick } = coreRequire('lodash');

const FIXTURES_DIR = path.resolve(__dirname, '..', 'fixtures');

/** The keys expect.json may hold, per part: an unknown one (a typo) would check nothing. */
const KNOWN_KEYS = {
	'': [
		'description',
		'sandbox',
		'pinData',
		'requests',
		'executedNodes',
		'outputs',
		'error',
		'state',
	],
	sandbox: ['options', 'faults'],
	error: ['node', 'name', 'message', 'description', 'httpCode', 'itemIndex', 'failure'],
	state: ['emails', 'profiles', 'lists', 'campaigns', 'campaignSends'],
	request: ['method', 'path', 'headers', 'body'],
};

/** Names of the fixture folders, sorted. */
const listFixtures = () =>
	fs
		.readdirSync(FIXTURES_DIR, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.map((entry) => entry.name)
		.sort();

/** @param {string} dir */
const readExpectation = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'expect.json'), 'utf8'));

/** @param {Record<string, any>} expected */
function refuseUnknownKeys(expected) {
	const parts = [
		['', expected],
		['sandbox', expected.sandbox],
		['error', expected.error],
		['state', expected.state],
		...(expected.requests ?? []).map((/** @type {object} */ request) => ['request', request]),
	];
	for (const [part, object] of parts) {
		const allowed = KNOWN_KEYS[/** @type {keyof KNOWN_KEYS} */ (part)];
		const unknown = Object.keys(object ?? {}).filter((key) => !allowed.includes(key));
		if (unknown.length) throw new Error(`expect.json ${part}: unknown key ${unknown}`);
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
 * A jest asymmetric matcher that prints as written in expect.json (a bound capture with its
 * value), so a diff reads like the file.
 * @param {string} text @param {(value: unknown) => boolean} test @param {() => string} [now]
 */
const placeholder = (text, test, now = () => '') => ({
	$$typeof: Symbol.for('jest.asymmetricMatcher'),
	asymmetricMatch: test,
	toAsymmetricMatcher: () => `${JSON.stringify(text)}${now()}`,
});

/**
 * Replaces "<any ...>", "<match /regex/flags>" and "<$name>" (any value the first time, the
 * same value at every other "<$name>" of the fixture) by matchers.
 * @param {unknown} value @param {Map<string, string>} captures
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
	if (KINDS[value]) return placeholder(value, KINDS[value]);
	const regex = /^<match \/(.*)\/([dgimsuvy]*)>$/s.exec(value);
	if (regex) {
		const pattern = new RegExp(regex[1], regex[2]);
		return placeholder(value, (actual) => typeof actual === 'string' && pattern.test(actual));
	}
	const name = /^<\$([A-Za-z_][\w-]*)>$/.exec(value)?.[1];
	if (!name) return value;
	return placeholder(
		value,
		(actual) => {
			if (actual === undefined) return false;
			if (!captures.has(name)) captures.set(name, JSON.stringify(actual));
			return captures.get(name) === JSON.stringify(actual);
		},
		() => (captures.has(name) ? ` (= ${captures.get(name)})` : ''),
	);
}

/**
 * Runs one fixture against a fresh sandbox.
 * @param {string} dir a fixture folder
 * @param {Record<string, any>} [expected] what expect.json says, by default the folder's
 * @returns {Promise<{ actual: Record<string, unknown>, expected: unknown, visible: string }>}
 *   `actual` has the keys of `expected`, for one toEqual; `visible` is all a user or a log
 *   reader sees (outputs, error, logs)
 */
async function runFixture(dir, expected = readExpectation(dir)) {
	refuseUnknownKeys(expected);
	const workflow = JSON.parse(fs.readFileSync(path.join(dir, 'workflow.json'), 'utf8'));
	const sandbox = await startSandbox(expected.sandbox?.options);
	try {
		if (expected.sandbox?.faults) sandbox.injectFaults(expected.sandbox.faults);
		const result = await runWorkflowFile(workflow, {
			packageDir: PACKAGE_DIR,
			credentials: { [CREDENTIAL_TYPE]: { apiKey: API_KEY, baseUrl: sandbox.baseUrl } },
			pinData: expected.pinData,
		});
		const { state } = sandbox;
		const views = {
			// The fields each expected request names; a request more shows method, path and body.
			requests: () =>
				sandbox.requests.map((request, index) => {
					const wanted = expected.requests[index] ?? { method: 1, path: 1, body: 1 };
					const headers = Object.keys(wanted.headers ?? {}).map((name) => [
						name,
						request.headers[name.toLowerCase()] ?? null,
					]);
					return pick({ ...request, headers: Object.fromEntries(headers) }, Object.keys(wanted));
				}),
			executedNodes: () => result.executedNodes,
			outputs: () =>
				Object.fromEntries(
					Object.keys(expected.outputs).map((node) => [
						node,
						result.outputs[node]?.map((/** @type {any[]} */ items) =>
							items.map((item) => pick(item, ['json', 'pairedItem', 'binary'])),
						) ?? null,
					]),
				),
			state: () =>
				pick(
					{
						emails: state.emails,
						profiles: [...state.profiles.values()],
						lists: [...state.lists.values()].map((list) => ({
							...list,
							profiles: [...list.profiles.values()],
						})),
						campaigns: [...state.campaigns.values()],
						campaignSends: state.campaignSends,
					},
					Object.keys(expected.state),
				),
		};
		/** @type {Record<string, unknown>} */
		const actual = {};
		for (const [key, view] of Object.entries(views)) if (expected[key]) actual[key] = view();
		const error = result.error && {
			...pick(result.error, KNOWN_KEYS.error),
			node: result.error.node?.name,
			itemIndex: result.error.context?.itemIndex,
		};
		// Without `error` in expect.json the run must not fail.
		actual.error = error && expected.error ? pick(error, Object.keys(expected.error)) : error;
		const { description, sandbox: _, pinData, ...wanted } = expected;
		const visible = JSON.stringify({
			outputs: result.outputs,
			error: error && { ...error, context: result.error.context, messages: result.error.messages },
			logs: result.logs,
		});
		return {
			actual,
			expected: withPlaceholders({ error: undefined, ...wanted }, new Map()),
			visible,
		};
	} finally {
		await sandbox.close();
	}
}

module.exports = { FIXTURES_DIR, listFixtures, readExpectation, runFixture };
