// @ts-check
'use strict';

/**
 * How an answer becomes a result (classifyAnswer, networkFailure) and whether it is sent again
 * (shouldRetry, waitBeforeRetry): the built functions, without the engine. The engine tests
 * (test/node/operations.test.js) check that every operation hands its answers to them.
 */

const {
	MAX_RETRY_AFTER_MS,
	classifyAnswer,
	keepServerValues,
	networkFailure,
	queuedEmail,
	shouldRetry,
	waitBeforeRetry,
} = require('./built');

/** @typedef {import('../../nodes/BasicsEngage/helpers/failure').Failure} Failure */

const KEY = 'be_secret_key';
/** A contract like Create List's: no daily quota, `listId` required. */
const listCreated = {
	check: (/** @type {any} */ data) => (typeof data.listId === 'string' ? undefined : 'no "listId"'),
	effect: 'the list may have been created',
};
const classify = (/** @type {any} */ answer, contract = queuedEmail) =>
	classifyAnswer(answer, /** @type {any} */ (contract), [KEY]);
const error = (/** @type {number} */ statusCode, /** @type {unknown} */ body, headers = {}) => ({
	statusCode,
	body,
	headers,
});
const inAMinute = new Date(Date.now() + 120_000).toUTCString();

// Through the engine instead: a 400 (operations.test.js), Send Email's 429 without Retry-After
// (the fixture send-email-429-continue-error-output), another operation's 429 and an unreachable
// proxy (errors.test.js, settings-and-input.test.js).
describe('classifyAnswer: the kind of each answer', () => {
	/** @typedef {[string, any, any, Record<string, unknown>, RegExp]} Row @type {Row[]} */
	const rows = [
		[
			'a 401 (text in `message`) is invalid_api_key and says not to try again',
			error(401, { status: 'error', message: 'Invalid API key' }),
			queuedEmail,
			{ kind: 'invalid_api_key', httpCode: '401', retry: undefined },
			/^BasicsEngage rejected the API key \(HTTP 401\)$/,
		],
		[
			'Send Email: a 429 asking for more than a minute is the daily quota',
			error(429, {}, { 'retry-after': '120' }),
			queuedEmail,
			{ kind: 'quota_exceeded', retryAfterMs: 120_000 },
			/quota/,
		],
		[
			'Send Email: a 429 with a short Retry-After (seconds) is a rate limit, sent again',
			error(429, {}, { 'retry-after': '0' }),
			queuedEmail,
			{ kind: 'rate_limited', retry: 'notSent', retryAfterMs: 0 },
			/limiting the rate/,
		],
		[
			'a 500 is server_error, may have taken effect, sent again only if repeatable',
			error(500, { status: 'error', message: 'Internal server error' }),
			queuedEmail,
			{
				kind: 'server_error',
				httpCode: '500',
				mayHaveTakenEffect: true,
				retry: 'maybeSent',
				description: expect.stringContaining(
					'the email may have been queued: check before sending it again',
				),
			},
			/could not handle the request/,
		],
		[
			'a 404 says the Base URL must include the API path',
			error(404, { status: 'error', error: 'Not found' }),
			queuedEmail,
			{
				kind: 'unexpected_response',
				httpCode: '404',
				description: expect.stringMatching(/Base URL without the API's path gets 404/),
			},
			/Not found/,
		],
		[
			'another status keeps its code: unexpected_response',
			error(418, { status: 'error', error: 'I am a teapot' }),
			queuedEmail,
			{ kind: 'unexpected_response', httpCode: '418', retry: undefined },
			/I am a teapot/,
		],
		[
			'a redirect is not followed: unexpected_response naming the host only',
			error(302, '', { location: 'http://evil.test/x?token=s3cr3t' }),
			queuedEmail,
			{
				kind: 'unexpected_response',
				httpCode: '302',
				mayHaveTakenEffect: true,
				retry: undefined,
				description: expect.stringContaining(
					'the email may have been queued: check before sending it again',
				),
			},
			/^BasicsEngage answered unexpectedly: a redirect \(HTTP 302\) to evil\.test$/,
		],
		[
			'a 200 that is not JSON is unexpected_response and may have taken effect',
			error(200, 'down for maintenance'),
			queuedEmail,
			{
				kind: 'unexpected_response',
				httpCode: '200',
				mayHaveTakenEffect: true,
				retry: undefined,
				description: expect.stringContaining(
					'the email may have been queued: check before sending it again',
				),
			},
			/not the documented success answer/,
		],
		[
			'a 200 with status "error" is not a success',
			error(200, { status: 'error', data: { messageId: 'm1' } }),
			queuedEmail,
			{ kind: 'unexpected_response' },
			/status "success"/,
		],
		[
			'a 200 without `data` is not a success',
			error(200, { status: 'success' }),
			queuedEmail,
			{ kind: 'unexpected_response' },
			/no "data" object/,
		],
		[
			'a 200 whose data breaks the contract is not a success',
			error(200, { status: 'success', data: { dailyEmailCount: 1 } }),
			queuedEmail,
			{ kind: 'unexpected_response' },
			/no "messageId"/,
		],
		[
			'a 200 of another contract is checked by that contract',
			error(200, { status: 'success', data: { listId: 42 } }),
			listCreated,
			{ kind: 'unexpected_response' },
			/no "listId"/,
		],
	];

	test.each(rows)('%s', (_, answer, contract, fields, message) => {
		const result = classify(answer, contract);
		expect(result).toBeInstanceOf(Error);
		expect(result).toMatchObject(fields);
		expect(result.message).toMatch(message);
		expect(JSON.stringify({ ...result, message: result.message })).not.toContain('s3cr3t');
	});

	test('the documented 200 is the success, as given', () => {
		const body = { status: 'success', data: { messageId: 'm1' } };
		expect(classify(error(200, body))).toBe(body);
	});

	test('a Retry-After date a minute away is a short wait', () => {
		const result = classify(error(429, {}, { 'retry-after': inAMinute }), listCreated);
		expect(result.retryAfterMs).toBeGreaterThan(100_000);
		expect(result.retryAfterMs).toBeLessThanOrEqual(120_000);
	});
});

describe('classifyAnswer: server text is untrusted', () => {
	test.each([
		['a 400 error text', error(400, { status: 'error', error: `bad key ${KEY}` })],
		['a 401 message with Bearer', error(401, { status: 'error', message: `Bearer ${KEY}` })],
		['a 500 HTML page', error(500, `<html><pre>Authorization: Bearer ${KEY}</pre></html>`)],
		['a 502 debug object', error(502, { debug: { authorization: `Bearer ${KEY}` } })],
		['a 200 that breaks the contract', error(200, { status: 'error', echo: { key: KEY } })],
		['a redirect', error(302, '', { location: `http://${KEY}.test/` })],
	])('the key echoed in %s is redacted', (_, answer) => {
		const result = classify(answer);
		const shown = `${result.message} ${result.description}`;
		expect(shown).not.toContain(KEY);
		expect(shown).toContain('[redacted]');
	});

	test.each([
		[
			'a link in a 400 message',
			error(400, { status: 'error', error: 'Bad: <a href="https://x.test">fix it</a>' }),
			'fix it',
		],
		[
			'an HTML error page',
			error(503, '<html><h1>Service Unavailable</h1><a href="//x.test">status</a></html>'),
			'Service Unavailable status',
		],
	])('%s shows as plain text, never markup', (_, answer, text) => {
		const result = classify(answer);
		const shown = `${result.message} ${result.description}`;
		expect(shown).toContain(text);
		expect(shown).not.toMatch(/[<>]/);
	});

	test.each([
		['a 5 MB error text', error(400, { status: 'error', error: 'x'.repeat(5 * 1024 * 1024) })],
		['a 5 MB HTML page', error(503, `<html>${'x'.repeat(5 * 1024 * 1024)}</html>`)],
		['a 5 KB HTML page', error(503, `<html>${'x'.repeat(5000)}</html>`)],
	])('%s is cut to a few KB that say they were cut', (_, answer) => {
		const result = classify(answer);
		expect(`${result.message} ${result.description}`.length).toBeLessThan(5000);
		expect(result.description).toMatch(/cut: \d+ more characters/);
	});

	test("a success's values (passed on as output) are kept as they came, the key redacted, and cut to text once too long", () => {
		const long = { blob: 'x'.repeat(1_000_000) };
		const answer = { data: { debug: `Bearer ${KEY}` }, count: 2, long, message: `for ${KEY}` };
		expect(keepServerValues(answer, [KEY])).toEqual({
			data: { debug: 'Bearer [redacted]' },
			count: 2,
			long: expect.stringMatching(/^\{"blob":"x+… \(cut: \d+ more characters\)$/),
			message: 'for [redacted]',
		});
	});
});

describe('networkFailure: no full answer', () => {
	const withCode = (/** @type {string} */ code) => Object.assign(new Error(code), { code });
	test.each([
		[
			'an unknown host never reached BasicsEngage',
			withCode('ENOTFOUND'),
			'notSent',
			/host name was not found$/,
			/nothing was sent/,
		],
		[
			'a reset may have reached it',
			withCode('ECONNRESET'),
			'maybeSent',
			/connection broke before the answer came$/,
			/may have been queued: check before sending it again/,
		],
		[
			'a timeout may have reached it',
			withCode('ETIMEDOUT'),
			'maybeSent',
			/the request timed out$/,
			/may have been queued.*Timeout in Request Options/,
		],
	])('%s', (_, cause, retry, message, description) => {
		const result = networkFailure(cause, queuedEmail);
		const mayHaveTakenEffect = retry === 'maybeSent';
		expect(result).toMatchObject({
			kind: 'network_error',
			httpCode: null,
			retry,
			mayHaveTakenEffect,
		});
		expect(result.message).toMatch(/^BasicsEngage could not be reached: /);
		expect(result.message).toMatch(message);
		// n8n 2.x swaps a message holding a socket code for its own stock text.
		expect(result.message).not.toMatch(/ECONN|ETIMEDOUT|ENOTFOUND/);
		expect(result.description).toMatch(description);
	});
});

describe('shouldRetry and waitBeforeRetry: what is sent again, and when', () => {
	/** A failed answer's result. @param {any} answer @param {typeof queuedEmail} [contract] @returns {Failure} */
	const failure = (answer, contract = listCreated) =>
		/** @type {Failure} */ (classify(answer, contract));
	const cut = (/** @type {string} */ code) =>
		networkFailure(Object.assign(new Error(), { code }), queuedEmail);
	test.each([
		['a refusal (400)', true, false, failure(error(400, {}))],
		['a 5xx, repeatable (an addition to a list)', true, true, failure(error(500, ''))],
		['a 5xx, not repeatable (a send)', false, false, failure(error(500, ''))],
		['a connection that was refused, even not repeatable', false, true, cut('ECONNREFUSED')],
		['a reset or a dropped answer, repeatable', true, true, cut('ECONNRESET')],
		['a reset or a dropped answer, not repeatable', false, false, cut('ECONNRESET')],
		[
			'a rate limit, even not repeatable',
			false,
			true,
			failure(error(429, {}, { 'retry-after': '1' })),
		],
		[
			'a rate limit asking for more than a minute',
			true,
			false,
			failure(error(429, {}, { 'retry-after': '61' })),
		],
		['the daily email quota (429)', true, false, failure(error(429, {}), queuedEmail)],
		[
			'a 5xx asking to wait more than a minute',
			true,
			false,
			failure(error(503, '', { 'retry-after': '3600' })),
		],
	])('%s (repeatable: %s): sent again %s', (_, repeatable, expected, result) => {
		expect(shouldRetry(result, repeatable)).toBe(expected);
	});

	test('Retry-After is waited as asked; otherwise backoff with jitter, doubling, capped at 30 s', () => {
		const policy = { retries: 5, waitMs: 1000 };
		expect(waitBeforeRetry(failure(error(429, {}, { 'retry-after': '7' })), 0, policy)).toBe(7000);
		const bounds = [
			[0, 500, 1000],
			[1, 1000, 2000],
			[3, 4000, 8000],
			[10, 15_000, 30_000],
		];
		for (const [attempt, low, high] of bounds) {
			const wait = waitBeforeRetry(failure(error(500, '')), attempt, policy);
			expect(wait).toBeGreaterThanOrEqual(low);
			expect(wait).toBeLessThanOrEqual(high);
		}
		expect(MAX_RETRY_AFTER_MS).toBe(60_000);
	});
});
