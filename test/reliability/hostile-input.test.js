// @ts-check
'use strict';

/**
 * Property-based tests over parameters and item data: every input gives either a correct
 * request or a clear per-item error; nothing throws out of the node, no header can be
 * injected, and the API key appears nowhere in output, errors or logs.
 */

const fc = require('fast-check');
const {
	API_KEY,
	addProfilesParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	pairedIndexes,
	runNode,
	sendParameters,
	startSandbox,
} = require('../support');

/** @type {Awaited<ReturnType<typeof startSandbox>>} */
let sandbox;
beforeAll(async () => {
	sandbox = await startSandbox({ dailyLimit: 1_000_000, verifiedSenders: null });
});
afterEach(() => sandbox.reset());
afterAll(() => sandbox.close());

const RUNS = { numRuns: 40 };
// Headers a request may carry; anything else would be an injected header.
const EXPECTED_HEADERS = new Set([
	'accept',
	'accept-encoding',
	'authorization',
	'authroization',
	'connection',
	'content-length',
	'content-type',
	'host',
	'user-agent',
]);

const tricky = fc.constantFrom(
	',',
	'=',
	'{{',
	'}}',
	'\n',
	'\r\n',
	'"',
	"'",
	'\\',
	'\u0000',
	'é',
	'😀',
	' ',
	'\t',
	'<',
	'>',
	'@',
	';',
);
const trickyText = fc
	.array(fc.oneof(fc.string(), tricky), { maxLength: 8 })
	.map((parts) => parts.join(''));
const emailLike = fc.oneof(
	fc.emailAddress(),
	fc.tuple(fc.emailAddress(), tricky).map(([email, extra]) => `${email}${extra}`),
	fc.tuple(tricky, fc.emailAddress()).map(([extra, email]) => `${extra}${email}`),
	fc
		.tuple(fc.string({ minLength: 65, maxLength: 300 }), fc.domain())
		.map(([local, domain]) => `${local}@${domain}`),
	fc.string(),
	fc.constant('jane@customer.test\r\nBcc: attacker@evil.test'),
);
/** Whatever an expression can hand a parameter: text, numbers, booleans, null, objects, lists, nothing. */
const anyValue = fc.oneof(
	{ weight: 4, arbitrary: trickyText },
	{ weight: 3, arbitrary: emailLike },
	fc.integer(),
	fc.double(),
	fc.boolean(),
	fc.constant(null),
	fc.constant(undefined),
	fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
	fc.array(fc.string(), { maxLength: 3 }),
);

/** Checks every outcome of a run: errors are per item and clear, requests are clean. */
function expectCleanRun(/** @type {any} */ result, /** @type {number} */ itemCount) {
	expect(result.error).toBeUndefined();
	expectEachInputExactlyOnce(result, itemCount);
	for (const item of result.errors) {
		expect(typeof item.json.error).toBe('string');
		expect(item.json.error.length).toBeGreaterThan(0);
		expect(['invalid_input', 'invalid_request']).toContain(item.json.details.kind);
	}
	for (const request of sandbox.requests) {
		for (const header of Object.keys(request.headers)) expect(EXPECTED_HEADERS).toContain(header);
	}
	expectNoSecret(result, API_KEY);
}

test('Send Email: any recipient, subject, body and template variables', async () => {
	await fc.assert(
		fc.asyncProperty(
			fc.array(
				fc.record({
					to: anyValue,
					subject: anyValue,
					text: anyValue,
					variableName: anyValue,
					variableValue: anyValue,
				}),
				{ minLength: 1, maxLength: 6 },
			),
			fc.constantFrom('text', 'template'),
			async (items, content) => {
				sandbox.reset();
				sandbox.setOptions({
					verifiedSenders: null,
					dailyLimit: 1_000_000,
					templates: { tmpl: [] },
				});
				const result = await runNode(sandbox, {
					parameters: sendParameters({
						to: '={{ $json.to }}',
						subject: '={{ $json.subject }}',
						text: '={{ $json.text }}',
						content,
						templateId: 'tmpl',
						templateVariables: {
							variable: [
								{ name: '={{ $json.variableName }}', value: '={{ $json.variableValue }}' },
							],
						},
					}),
					items,
					onError: 'continueErrorOutput',
				});
				expectCleanRun(result, items.length);
				// Each email that went out carries its item's values, unchanged.
				const sentBodies = sandbox.requests.map((request) => request.body);
				for (const item of result.success) {
					const source = items[pairedIndexes(item)[0]];
					const body = sentBodies.find((candidate) => candidate.to === String(source.to).trim());
					expect(body).toBeDefined();
					if (content === 'text') expect(body.text).toBe(String(source.text));
					else
						expect(Object.values(body.templateVariables ?? {})).toEqual(
							source.variableValue === undefined ||
								source.variableValue === null ||
								source.variableValue === ''
								? ['']
								: [String(source.variableValue)],
						);
				}
			},
		),
		RUNS,
	);
});

test('Add Profiles: any email, first and last name', async () => {
	await fc.assert(
		fc.asyncProperty(
			fc.array(fc.record({ email: anyValue, firstName: anyValue, lastName: anyValue }), {
				minLength: 1,
				maxLength: 8,
			}),
			async (items) => {
				sandbox.reset();
				const result = await runNode(sandbox, {
					parameters: addProfilesParameters({
						additionalFields: {
							firstName: '={{ $json.firstName }}',
							lastName: '={{ $json.lastName }}',
						},
						options: { batchSize: 3 },
					}),
					items,
					onError: 'continueErrorOutput',
				});
				expectCleanRun(result, items.length);
				const sentProfiles = sandbox.requests.flatMap((request) => request.body.profiles);
				for (const profile of sentProfiles) {
					expect(typeof profile.email).toBe('string');
					for (const field of ['firstName', 'lastName']) {
						if (field in profile) expect(typeof profile[field]).toBe('string');
					}
				}
			},
		),
		RUNS,
	);
});

test('1 MB subject and body go out unchanged', async () => {
	const megabyte = 'é😀,={{x}}\n'.repeat(100_000).slice(0, 1_000_000);
	const result = await runNode(sandbox, {
		parameters: sendParameters({ subject: '={{ $json.big }}', text: '={{ $json.big }}' }),
		items: [{ email: 'jane@customer.test', big: megabyte }],
	});
	expect(result.error).toBeUndefined();
	expect(sandbox.requests[0].body.subject).toBe(megabyte);
	expect(sandbox.requests[0].body.text).toBe(megabyte);
});

describe('credential values', () => {
	test('an API key with surrounding whitespace or a base URL with trailing slashes works', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.constantFrom('', ' ', '\t', '\n', '  \r\n'),
				fc.constantFrom('', '/', '//', '/ ', ' '),
				async (space, tail) => {
					sandbox.reset();
					const result = await runNode(sandbox, {
						parameters: sendParameters(),
						items: [{ email: 'jane@customer.test' }],
						apiKey: `${space}${API_KEY}${space}`,
						baseUrl: `${space}${sandbox.baseUrl}${tail}`,
					});
					expect(result.error).toBeUndefined();
					expect(sandbox.requests[0].path).toBe('/email/send');
					expect(sandbox.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
				},
			),
			{ numRuns: 15 },
		);
	});

	test('an API key that cannot be one header value is refused before any request, unechoed', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.tuple(
					fc.string({ minLength: 1 }),
					fc.constantFrom('\r\n', '\n', '\r', '\u0000', ' ', 'é', '\u2028'),
					fc.string(),
				),
				async ([head, bad, tail]) => {
					sandbox.reset();
					const apiKey = `k${head.replace(/\s/g, '')}${bad}X-Injected: ${tail}k`;
					const result = await runNode(sandbox, {
						parameters: sendParameters(),
						items: [{ email: 'jane@customer.test' }],
						apiKey,
					});
					expect(result.error.message).toMatch(/^The API key in the credential/);
					expect(sandbox.requests).toHaveLength(0);
					expectNoSecret(result, apiKey);
				},
			),
			{ numRuns: 25 },
		);
	});

	test('a base URL with a line break or space inside is refused with a clear message', async () => {
		for (const baseUrl of [
			`${'http://127.0.0.1'}\r\n/x`,
			'http://exa mple.com/api',
			'ftp://example.com',
			'',
		]) {
			sandbox.reset();
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: [{ email: 'jane@customer.test' }],
				baseUrl,
			});
			expect(result.error.message).toBe('The Base URL in the credential is not valid');
			expect(sandbox.requests).toHaveLength(0);
		}
	});
});
