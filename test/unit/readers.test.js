// @ts-check
'use strict';

/**
 * What the node reads from an item or a setting before anything is sent, and what it refuses:
 * the built readers, without the engine. That a refusal fails only its item (or every item, for
 * a setting) and sends nothing is the engine's part: test/node/operations.test.js.
 */

const fc = require('fast-check');
const { NodeHelpers } = require('n8n-workflow');
const {
	BasicsEngageApi,
	checkCredential,
	concurrencyOption,
	isLoopback,
	readEmailAddress,
	readIdList,
	readNumberOption,
	readOptionalText,
	readText,
	readTrimmed,
	requestBatchingValues,
	requestTimeout,
	retriesOption,
	retryWaitOption,
	toBatches,
} = require('./built');

/** What a reader returns, or `{ error, kind }` of what it throws. */
function read(/** @type {() => unknown} */ reader) {
	try {
		return reader();
	} catch (error) {
		return { error: error.message, kind: error.kind };
	}
}
const refused = (/** @type {string} */ error) => ({ error, kind: 'invalid_input' });

test.each([
	['readText: text as given', () => readText(' Hi ', 'Subject'), ' Hi '],
	['readText: a number becomes text', () => readText(42, 'Subject'), '42'],
	['readText: empty is required', () => readText('', 'Subject'), refused('Subject is required')],
	[
		'readText: an object is refused',
		() => readText({ a: 1 }, 'Subject'),
		refused('Subject must be text, not an object'),
	],
	[
		'readText: a list is refused',
		() => readText([1], 'Subject'),
		refused('Subject must be text, not a list'),
	],
	['readOptionalText: empty is undefined', () => readOptionalText(null, 'Description'), undefined],
	['readTrimmed: trimmed', () => readTrimmed(' tmpl_welcome ', 'Template ID'), 'tmpl_welcome'],
	[
		'readTrimmed: only spaces is required',
		() => readTrimmed('   ', 'Template ID'),
		refused('Template ID is required'),
	],
	[
		'readIdList: typed with commas: trimmed, empty ones dropped',
		() => readIdList(' p1 ,, p2, ', 'Profile IDs'),
		['p1', 'p2'],
	],
	[
		'readIdList: a list from an expression',
		() => readIdList(['p2', ' ', 'p1'], 'Profile IDs'),
		['p2', 'p1'],
	],
	['readIdList: empty: none', () => readIdList('', 'Profile IDs'), []],
	[
		'readIdList: a number in the list',
		() => readIdList(['p1', 42], 'Profile IDs'),
		refused('Profile IDs must hold only texts, but entry 2 is a number'),
	],
	[
		'readIdList: an object',
		() => readIdList({ id: 'p1' }, 'Profile IDs'),
		refused('Profile IDs must be text or a list of texts, not an object'),
	],
])('%s', (_, reader, expected) => {
	expect(read(reader)).toEqual(expected);
});

describe('readEmailAddress', () => {
	test.each([
		['a plain address, trimmed', ' jane@customer.test ', 'jane@customer.test'],
		['a sub-domain', 'a.b+c@mail.customer.test', 'a.b+c@mail.customer.test'],
		['empty', '', 'To is required'],
		['not an address', 'not-an-address', 'To is not a valid email address: "not-an-address"'],
		['no dot in the domain', 'jane@localhost', 'To is not a valid email address: "jane@localhost"'],
		[
			'a line break (header injection)',
			'jane@customer.test\r\nBcc: x@y.z',
			/^To is not a valid email address/,
		],
		['two addresses', 'a@x.test, b@x.test', /^To is not a valid email address/],
		['an object', { nested: true }, 'To must be text, not an object'],
		['null', null, 'To is required'],
	])('%s', (_, value, expected) => {
		const result = read(() => readEmailAddress(value, 'To'));
		if (typeof expected === 'string' && !expected.includes(' ')) expect(result).toBe(expected);
		else if (typeof expected === 'string') expect(result).toEqual(refused(expected));
		else expect(/** @type {any} */ (result).error).toMatch(expected);
	});

	// Zero-width space, non-joiner and joiner, word joiner, BOM, soft hyphen, a right-to-left
	// override, a no-break space and a line separator.
	test.each(['200b', '200c', '200d', '2060', 'feff', '00ad', '202e', '00a0', '2028'])(
		'an invisible U+%s is refused, shown as \\uXXXX in the message and named in the description',
		(code) => {
			const address = `jane${String.fromCodePoint(parseInt(code, 16))}@customer.test`;
			expect(() => readEmailAddress(address, 'To')).toThrow(
				expect.objectContaining({
					kind: 'invalid_input',
					message: `To is not a valid email address: "jane\\u${code}@customer.test"`,
					description: expect.stringContaining(`invisible character, shown as \\u${code}`),
				}),
			);
		},
	);
});

describe('readNumberOption: numbers typed as expressions, held to their field', () => {
	const concurrency = concurrencyOption('');
	const [itemsPerBatch] = requestBatchingValues;
	const RETRIES = 'Retries must be a whole number from 0 to 10';
	const RETRY_WAIT = 'Retry Wait must be a number from 0 to 60000';
	const CONCURRENCY = 'Concurrency must be a whole number from 1 to 50';
	test.each([
		['absent: the default', retriesOption, undefined, 2],
		['text holding a number', retriesOption, ' 1 ', 1],
		['the maximum', retriesOption, 10, 10],
		['text that is no number', retriesOption, 'abc', RETRIES],
		['Infinity', retriesOption, Infinity, RETRIES],
		['above the maximum', retriesOption, 11, RETRIES],
		[
			'a fraction where a whole number is wanted',
			itemsPerBatch,
			2.5,
			'Items per Batch must be a whole number of at least -1',
		],
		['Retry Wait above a minute', retryWaitOption, 60_001, RETRY_WAIT],
		['Retry Wait below 0', retryWaitOption, -1, RETRY_WAIT],
		['Timeout as text', requestTimeout, 'soon', 'Timeout must be a number from 1 to 3600000'],
		['Concurrency 0', concurrency, 0, CONCURRENCY],
	])('%s', (_, property, value, expected) => {
		const result = read(() => readNumberOption({ [property.name]: value }, property));
		expect(result).toEqual(typeof expected === 'number' ? expected : refused(expected));
	});
});

describe('credential checks', () => {
	const NOT_VALID = 'The Base URL in the credential is not valid';
	const KEY = 'be_live_123';
	test.each([
		['Base URL: the public default', 'https://api.basicsengage.com/api/v0/dev', KEY, undefined],
		['Base URL: a local sandbox', 'http://127.0.0.1:4010/api/v0/dev', KEY, undefined],
		['Base URL: not a URL', 'not a url at all', KEY, NOT_VALID],
		['Base URL: a line break inside', 'http://127.0.0.1\r\n/x', KEY, NOT_VALID],
		['Base URL: another scheme', 'ftp://api.test/', KEY, NOT_VALID],
		['Base URL: a user before "@"', 'https://user@api.test/', KEY, /user name or password/],
		[
			'API key: "bearer " in lower case',
			'https://api.test',
			'bearer be_live_123',
			/starts with "Bearer "/,
		],
		['API key: a non-ASCII letter', 'https://api.test', 'be_livé', /non-ASCII/],
		['API key: empty', 'https://api.test', '', /empty/],
	])('%s', (_, baseUrl, apiKey, problem) => {
		const checked = checkCredential(baseUrl, apiKey);
		if (problem === undefined) expect(String(checked)).toBe(new URL(baseUrl).href);
		else expect(checked).toHaveProperty('message', expect.stringMatching(problem));
	});

	test('API key: any key that cannot be one header value is refused', () => {
		fc.assert(
			fc.property(
				fc.string({ minLength: 1 }),
				fc.constantFrom('\r\n', '\n', '\r', '\u0000', ' ', 'é', '\u2028'),
				fc.string(),
				(head, bad, tail) => {
					const apiKey = `k${head.replace(/\s/g, '')}${bad}X-Injected: ${tail}k`;
					expect(checkCredential('https://api.test', apiKey)).toHaveProperty(
						'message',
						'The API key in the credential is empty or contains spaces, line breaks or non-ASCII characters',
					);
				},
			),
			{ numRuns: 500 },
		);
	});

	test.each([
		['https://api.basicsengage.com/api/v0/dev', 'api.basicsengage.com', false],
		['http://gateway.test/api/v0/dev', 'gateway.test', true],
		['http://127.0.0.1', '127.0.0.1', false],
		['http://localhost:4010/api/v0/dev', 'localhost', false],
		['http://[::1]:4010/api/v0/dev', '[::1]', false],
		['HTTP://10.0.0.5/api', '10.0.0.5', true],
	])('plain http to another machine: %s -> notice %s', (baseUrl, host, notice) => {
		// The form's notice (as n8n's own displayOptions logic shows it) and the run-time check agree.
		const shown = new BasicsEngageApi().properties.find((p) => p.name === 'plainHttpNotice');
		expect(NodeHelpers.displayParameter({ baseUrl }, /** @type {any} */ (shown), null, null)).toBe(
			notice,
		);
		expect(!isLoopback(host) && baseUrl.toLowerCase().startsWith('http:')).toBe(notice);
	});
});

describe('toBatches: Add Profiles batches', () => {
	const entries = (/** @type {Array<string | undefined>} */ lists) =>
		lists.map((listId, itemIndex) => ({ itemIndex, body: { listId } }));
	const shape = (/** @type {any[]} */ batches) =>
		batches.map(({ listId, profiles }) => [
			listId,
			profiles.map((/** @type {any} */ p) => p.itemIndex),
		]);

	// A last batch of the rest, and a new list batched like any list: the fixture
	// test/fixtures/add-profiles-new-list-in-batches (seven profiles in batches of two).
	test.each([
		['N = batch size: one batch', 5, Array(5).fill('l'), [['l', [0, 1, 2, 3, 4]]]],
		[
			'a list ID per item: grouped per list, lists in order of first appearance',
			2,
			['a', 'b', 'a', 'b', 'a'],
			[
				['a', [0, 2]],
				['a', [4]],
				['b', [1, 3]],
			],
		],
	])('%s', (_, batchSize, lists, expected) => {
		expect(shape(toBatches(entries(lists), batchSize))).toEqual(expected);
	});
});
