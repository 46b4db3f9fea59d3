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
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	pairedIndexes,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const PROFILE_ID = 'prof_00000000000000a1';
const LIST_ID = 'list_hostile';
const CAMPAIGN_ID = 'dddddddddddddddddddddddd';

const sandbox = useSandbox({
	dailyLimit: 1_000_000,
	verifiedSenders: null,
	profiles: [{ profileId: PROFILE_ID, email: 'ann@customer.test' }],
	lists: [{ listId: LIST_ID, profiles: [{ email: 'ann@customer.test' }] }],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'C', subject: 'S', recepientList: [LIST_ID] }],
});

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

/**
 * Checks every outcome of a run: errors are per item and clear, requests are clean.
 * @param {any} result
 * @param {number} itemCount
 * @param {string[]} [kinds] the failure kinds the run may show; an unknown ID answers 404,
 *   which is unexpected_response
 */
function expectCleanRun(result, itemCount, kinds = ['invalid_input', 'invalid_request']) {
	expect(result.error).toBeUndefined();
	expectEachInputExactlyOnce(result, itemCount);
	for (const item of result.errors) {
		expect(typeof item.json.error).toBe('string');
		expect(item.json.error.length).toBeGreaterThan(0);
		expect(kinds).toContain(item.json.details.kind);
		if (item.json.details.kind === 'unexpected_response')
			expect(item.json.details.httpCode).toBe(404);
	}
	for (const request of sandbox.requests) {
		for (const header of Object.keys(request.headers)) expect(EXPECTED_HEADERS).toContain(header);
	}
	expectNoSecret(result, API_KEY);
}

/**
 * Runs the node on generated items with failures on the error output, and checks the run with
 * expectCleanRun.
 * @param {import('n8n-workflow').INodeParameters} parameters
 * @param {Array<Record<string, unknown>>} items
 * @param {string[]} [kinds]
 */
async function runClean(parameters, items, kinds) {
	const result = await runNode(sandbox, { parameters, items, onError: 'continueErrorOutput' });
	expectCleanRun(result, items.length, kinds);
	return result;
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
				const result = await runClean(
					sendParameters({
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
				);
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
				const result = await runClean(
					addProfilesParameters({
						additionalFields: {
							firstName: '={{ $json.firstName }}',
							lastName: '={{ $json.lastName }}',
						},
						options: { batchSize: 3 },
					}),
					items,
				);
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

/** IDs as an expression may hand them over: real ones, padded, among hostile text and non-text. */
const idsLike = (/** @type {string} */ realId) =>
	fc.oneof(
		anyValue,
		fc.constant(realId),
		fc.tuple(tricky, tricky).map(([before, after]) => `${before}${realId}${after}`),
		fc.array(fc.oneof(fc.constant(realId), fc.constant(` ${realId} `), anyValue), {
			maxLength: 4,
		}),
	);
const WITH_404 = ['invalid_input', 'invalid_request', 'unexpected_response'];

test('Create List: any name, description and profile IDs', async () => {
	let accepted = 0;
	await fc.assert(
		fc.asyncProperty(
			fc.array(fc.record({ name: anyValue, description: anyValue, ids: idsLike(PROFILE_ID) }), {
				minLength: 1,
				maxLength: 5,
			}),
			async (items) => {
				sandbox.reset();
				const result = await runClean(
					createListParameters({
						listName: '={{ $json.name }}',
						listDescription: '={{ $json.description }}',
						profileIds: '={{ $json.ids }}',
					}),
					items,
					WITH_404,
				);
				accepted += result.success.length;
				// Each created list is one item's, with that item's values as sent.
				for (const item of result.success) {
					const source = items[pairedIndexes(item)[0]];
					const list = sandbox.state.lists.get(String(item.json.listId));
					expect(list?.name).toBe(String(source.name).trim());
					expect(list?.description).toBe(String(source.description));
				}
				for (const request of sandbox.requests) {
					for (const id of request.body.profiles ?? []) {
						expect(typeof id).toBe('string');
						expect(id).toBe(id.trim());
						expect(id).not.toBe('');
					}
				}
			},
		),
		RUNS,
	);
	// The generated values reach the API often enough for the checks above to mean something.
	expect(accepted).toBeGreaterThan(5);
});

test('Create Campaign: any name, subject, content and list IDs', async () => {
	let accepted = 0;
	await fc.assert(
		fc.asyncProperty(
			fc.array(
				fc.record({
					name: anyValue,
					subject: anyValue,
					content: anyValue,
					lists: idsLike(LIST_ID),
				}),
				{ minLength: 1, maxLength: 5 },
			),
			fc.constantFrom('html', 'text'),
			async (items, contentFormat) => {
				sandbox.reset();
				const result = await runClean(
					createCampaignParameters({
						campaignName: '={{ $json.name }}',
						campaignSubject: '={{ $json.subject }}',
						contentFormat,
						campaignHtml: '={{ $json.content }}',
						campaignText: '={{ $json.content }}',
						recipientListIds: '={{ $json.lists }}',
					}),
					items,
					WITH_404,
				);
				accepted += result.success.length;
				for (const item of result.success) {
					const source = items[pairedIndexes(item)[0]];
					const campaign = sandbox.state.campaigns.get(String(item.json.campaignId));
					expect(campaign?.name).toBe(String(source.name).trim());
					expect(item.json.name).toBe(campaign?.name);
					expect(item.json.subject).toBe(String(source.subject));
				}
				for (const request of sandbox.requests) {
					expect(request.body.recipientList).toEqual(request.body.recepientList);
				}
			},
		),
		RUNS,
	);
	// The generated values reach the API often enough for the checks above to mean something.
	expect(accepted).toBeGreaterThan(5);
});

test('Send Campaign: any campaign ID; each accepted item is exactly one send', async () => {
	let accepted = 0;
	await fc.assert(
		fc.asyncProperty(
			fc.array(fc.record({ campaignId: idsLike(CAMPAIGN_ID) }), { minLength: 1, maxLength: 5 }),
			async (items) => {
				sandbox.reset();
				const result = await runClean(sendCampaignParameters(), items, WITH_404);
				accepted += result.success.length;
				expect(sandbox.state.campaignSends).toHaveLength(result.success.length);
				for (const item of result.success) {
					expect(item.json).toMatchObject({ campaignId: CAMPAIGN_ID, sendingStarted: true });
				}
			},
		),
		RUNS,
	);
	// The generated values reach the API often enough for the checks above to mean something.
	expect(accepted).toBeGreaterThan(5);
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
});
