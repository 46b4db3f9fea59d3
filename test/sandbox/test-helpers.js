// @ts-check
'use strict';

/**
 * What the sandbox's own tests (./sandbox.test.js, ./campaigns.test.js) share: a POST over real
 * HTTP, the demo key in the headers each route reads, valid bodies, the spec's error bodies, and
 * the one test of a rejected request.
 */

const DEMO_KEY = 'be_sandbox_demo_key';
const AUTH = { authorization: `Bearer ${DEMO_KEY}` };
/** The published, misspelled header Add Profiles reads by default (README rule 14). */
const LIST_AUTH = { authroization: `Bearer ${DEMO_KEY}` };

/** @param {string} route */
const authFor = (route) => (route === '/list/addProfiles' ? LIST_AUTH : AUTH);

/**
 * POSTs a body: objects as JSON, strings as they are.
 * @param {{ baseUrl: string }} target a sandbox, or anything with its base URL
 * @param {string} route path under basePath
 * @param {unknown} body
 * @param {Record<string, string>} [headers] default: the demo key where `route` reads it
 */
const request = (target, route, body, headers = authFor(route)) =>
	fetch(`${target.baseUrl}${route}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
	});

/**
 * POSTs as `request` does; the answer's status and body (parsed when JSON).
 * @param {Parameters<typeof request>} args
 * @returns {Promise<{ status: number, body: any }>}
 */
async function post(...args) {
	const response = await request(...args);
	const text = await response.text();
	const isJson = response.headers.get('content-type')?.startsWith('application/json');
	return { status: response.status, body: isJson && text ? JSON.parse(text) : undefined };
}

/** The spec's error bodies: status 'error' plus exactly one text field, `error`... */
const error = (/** @type {string} */ text) => ({ status: 'error', error: text });
/** ...or `message` (401, 404 for a route, 500). */
const message = (/** @type {string} */ text) => ({ status: 'error', message: text });

const INVALID_KEY = message('Invalid API key');
const INVALID_JSON = error('Request body must be valid JSON');
const NOT_AN_OBJECT = error('Request body must be a JSON object');
const INTERNAL_ERROR = message('Internal server error. Please retry later.');
const required = (/** @type {string} */ field) => error(`Field "${field}" is required`);
const notString = (/** @type {string} */ field) => error(`Field "${field}" must be a string`);
const empty = (/** @type {string} */ field) => error(`Field "${field}" must not be empty`);

/** @param {Record<string, unknown>} [overrides] */
const validEmail = (overrides = {}) => ({
	to: 'jane@customer.test',
	from: 'hello@example.com',
	subject: 'Welcome aboard',
	text: 'Hello Jane',
	...overrides,
});

/** @param {Record<string, unknown>} [overrides] */
const validList = (overrides = {}) => ({
	listName: 'Newsletter',
	listDescription: 'Monthly news',
	...overrides,
});

/** @param {Record<string, unknown>} [overrides] */
const validCampaign = (overrides = {}) => ({
	name: 'Holiday Sale',
	subject: 'Exclusive 50% Off',
	content: '<p>Happy Holidays!</p>',
	...overrides,
});

/**
 * The whole state as text, quota counters aside (a 429 starts the day's counter at 0): a
 * rejected request leaves it as it was.
 * @param {import('./server').SandboxHandle} target
 */
const snapshot = (target) =>
	JSON.stringify(target.state, (key, value) =>
		key === 'quota' ? undefined : value instanceof Map ? [...value] : value,
	);

/**
 * @typedef {[title: string, route: string, body: unknown, status: number, answer: object,
 *   headers?: Record<string, string>, options?: import('./server').SandboxOptions]} Rejection
 */

/**
 * The test of one rejected request, a row of a `test.each` table: the exact answer, so its error
 * body has exactly one text field (README rule 44), and the state unchanged. `options` are set
 * first; `headers` default to the demo key where the route reads it. (A rest parameter: jest
 * would take a function with more parameters than a row has columns for a `done` callback.)
 * @param {() => import('./server').SandboxHandle} target
 */
const expectRejected =
	(target) =>
	async (/** @type {Rejection} */ ...[, route, body, status, answer, headers, options]) => {
		if (options) target().setOptions(options);
		const before = snapshot(target());
		expect(await post(target(), route, body, headers)).toEqual({ status, body: answer });
		expect(snapshot(target())).toBe(before);
	};

/**
 * The rejections every route has: the spec's 401 without a key, with an unknown key and with the
 * key but no "Bearer" (in the header the route reads); then (README rules 1 and 3, 15, 26, 32,
 * 37) the key checked before the body, and the 400s for a body that is not JSON or not an object.
 * @param {string} rule the README rule(s) for the order of checks and the JSON 400s
 * @param {string} name the endpoint, e.g. 'Create List'
 * @param {string} route
 * @param {unknown} body a valid body
 * @param {unknown} notAnObject a JSON value that is not an object
 * @returns {Rejection[]}
 */
function keyAndJsonRejections(rule, name, route, body, notAnObject) {
	const header = Object.keys(authFor(route))[0];
	const json = JSON.stringify(notAnObject);
	// prettier-ignore
	return [
		[`spec: ${name} without a key`, route, body, 401, INVALID_KEY, {}],
		[`spec: ${name} with an unknown key`, route, body, 401, INVALID_KEY, { [header]: 'Bearer x' }],
		[`spec: ${name} with the key but no "Bearer"`, route, body, 401, INVALID_KEY, { [header]: DEMO_KEY }],
		[`${rule}: ${name} checks the key before the body`, route, '{oops', 401, INVALID_KEY, {}],
		[`${rule}: ${name}, a body that is not JSON`, route, '{oops', 400, INVALID_JSON],
		[`${rule}: ${name}, a JSON body that is not an object: ${json}`, route, json, 400, NOT_AN_OBJECT],
	];
}

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {() => boolean} condition */
async function waitFor(condition, timeoutMs = 2000) {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
		await sleep(10);
	}
}

module.exports = {
	DEMO_KEY,
	AUTH,
	LIST_AUTH,
	request,
	post,
	error,
	message,
	INVALID_KEY,
	INVALID_JSON,
	NOT_AN_OBJECT,
	INTERNAL_ERROR,
	required,
	notString,
	empty,
	validEmail,
	validList,
	validCampaign,
	snapshot,
	expectRejected,
	keyAndJsonRejections,
	sleep,
	waitFor,
};
