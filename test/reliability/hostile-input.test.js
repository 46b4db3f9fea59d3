// @ts-check
'use strict';

/**
 * Property-based tests over parameters and item data, one table over the operations: every
 * input gives either a correct request or a clear per-item error; nothing throws out of the
 * node, no header can be injected, and the API key appears nowhere in output, errors or logs.
 * Credential values with spaces: test/credential.test.js.
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
	templates: { tmpl: [] },
	profiles: [{ profileId: PROFILE_ID, email: 'ann@customer.test' }],
	lists: [{ listId: LIST_ID, profiles: [{ email: 'ann@customer.test' }] }],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'C', subject: 'S', recepientList: [LIST_ID] }],
});

// Headers a request may carry; anything else would be an injected header.
const EXPECTED_HEADERS = new Set(
	'accept accept-encoding authorization authroization connection content-length content-type host user-agent'.split(
		' ',
	),
);

const tricky = fc.constantFrom(
	...[',', '=', '{{', '}}', '\n', '\r\n', '"', "'", '\\', '\u0000', 'é', '😀', ' ', '\t'],
	...['<', '>', '@', ';'],
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
/** The source item of an output item. @param {any[]} items @param {any} item */
const sourceOf = (items, item) => items[pairedIndexes(item)[0]];
const sent = () => sandbox.requests.map((request) => request.body);

/**
 * Each operation: its items' fields, one parameter variant, its parameters reading the fields by
 * expression, whether an unknown ID may answer 404 (unexpected_response; then enough items must
 * reach the API for the checks to mean something), and what each success must have sent.
 * @type {Record<string, { item: fc.Arbitrary<any>, variant?: fc.Arbitrary<string>,
 *   parameters: (variant: any) => any, unknownId?: boolean,
 *   check: (result: any, items: any[], variant: any) => void }>}
 */
const OPERATIONS = {
	'Send Email: any recipient, subject, body and template variables': {
		item: fc.record({
			to: anyValue,
			subject: anyValue,
			text: anyValue,
			name: anyValue,
			value: anyValue,
		}),
		variant: fc.constantFrom('text', 'template'),
		parameters: (content) =>
			sendParameters({
				to: '={{ $json.to }}',
				subject: '={{ $json.subject }}',
				text: '={{ $json.text }}',
				content,
				templateId: 'tmpl',
				templateVariables: {
					variable: [{ name: '={{ $json.name }}', value: '={{ $json.value }}' }],
				},
			}),
		check(result, items, content) {
			// Each email that went out carries its item's values, unchanged.
			for (const item of result.success) {
				const source = sourceOf(items, item);
				const body = sent().find((candidate) => candidate.to === String(source.to).trim());
				if (content === 'text') expect(body?.text).toBe(String(source.text));
				else
					expect(Object.values(body?.templateVariables ?? {})).toEqual([
						[undefined, null, ''].includes(source.value) ? '' : String(source.value),
					]);
			}
		},
	},
	'Add Profiles: any email, first and last name': {
		item: fc.record({ email: anyValue, firstName: anyValue, lastName: anyValue }),
		parameters: () =>
			addProfilesParameters({
				additionalFields: {
					firstName: '={{ $json.firstName }}',
					lastName: '={{ $json.lastName }}',
				},
				options: { batchSize: 3 },
			}),
		check() {
			for (const profile of sent().flatMap((body) => body.profiles)) {
				for (const field of ['email', 'firstName', 'lastName']) {
					if (field in profile) expect(typeof profile[field]).toBe('string');
				}
			}
		},
	},
	'Create List: any name, description and profile IDs': {
		item: fc.record({ name: anyValue, description: anyValue, ids: idsLike(PROFILE_ID) }),
		parameters: () =>
			createListParameters({
				listName: '={{ $json.name }}',
				listDescription: '={{ $json.description }}',
				profileIds: '={{ $json.ids }}',
			}),
		unknownId: true,
		check(result, items) {
			// Each created list is one item's, with that item's values as sent.
			for (const item of result.success) {
				const source = sourceOf(items, item);
				const list = sandbox.state.lists.get(String(item.json.listId));
				expect([list?.name, list?.description]).toEqual([
					String(source.name).trim(),
					String(source.description),
				]);
			}
			for (const id of sent().flatMap((body) => body.profiles ?? [])) {
				expect(typeof id === 'string' && id === id.trim() && id !== '').toBe(true);
			}
		},
	},
	'Create Campaign: any name, subject, content and list IDs': {
		item: fc.record({
			name: anyValue,
			subject: anyValue,
			content: anyValue,
			lists: idsLike(LIST_ID),
		}),
		variant: fc.constantFrom('html', 'text'),
		parameters: (contentFormat) =>
			createCampaignParameters({
				campaignName: '={{ $json.name }}',
				campaignSubject: '={{ $json.subject }}',
				contentFormat,
				campaignHtml: '={{ $json.content }}',
				campaignText: '={{ $json.content }}',
				recipientListIds: '={{ $json.lists }}',
			}),
		unknownId: true,
		check(result, items) {
			for (const item of result.success) {
				const source = sourceOf(items, item);
				const campaign = sandbox.state.campaigns.get(String(item.json.campaignId));
				expect(campaign?.name).toBe(String(source.name).trim());
				expect([item.json.name, item.json.subject]).toEqual([
					campaign?.name,
					String(source.subject),
				]);
			}
			for (const body of sent()) expect(body.recipientList).toEqual(body.recepientList);
		},
	},
	'Send Campaign: any campaign ID; each accepted item is exactly one send': {
		item: fc.record({ campaignId: idsLike(CAMPAIGN_ID) }),
		parameters: () => sendCampaignParameters(),
		unknownId: true,
		check(result) {
			expect(sandbox.state.campaignSends).toHaveLength(result.success.length);
			for (const item of result.success) {
				expect(item.json).toMatchObject({ campaignId: CAMPAIGN_ID, sendingStarted: true });
			}
		},
	},
};

test.each(Object.keys(OPERATIONS))('%s', async (name) => {
	const operation = OPERATIONS[name];
	const kinds = [
		'invalid_input',
		'invalid_request',
		...(operation.unknownId ? ['unexpected_response'] : []),
	];
	let accepted = 0;
	await fc.assert(
		fc.asyncProperty(
			fc.array(operation.item, { minLength: 1, maxLength: 6 }),
			operation.variant ?? fc.constant(undefined),
			async (items, variant) => {
				sandbox.reset();
				const result = await runNode(sandbox, {
					parameters: operation.parameters(variant),
					items,
					onError: 'continueErrorOutput',
				});
				expect(result.error).toBeUndefined();
				expectEachInputExactlyOnce(result, items.length);
				for (const item of result.errors) {
					expect(item.json.error).toEqual(expect.stringMatching(/./));
					expect(kinds).toContain(item.json.details.kind);
					// An unknown ID answers 404.
					if (item.json.details.kind === 'unexpected_response')
						expect(item.json.details.httpCode).toBe(404);
				}
				for (const request of sandbox.requests) {
					for (const header of Object.keys(request.headers))
						expect(EXPECTED_HEADERS).toContain(header);
				}
				expectNoSecret(result, API_KEY);
				accepted += result.success.length;
				operation.check(result, items, variant);
			},
		),
		{ numRuns: 40 },
	);
	// The generated values reach the API often enough for the checks above to mean something.
	if (operation.unknownId) expect(accepted).toBeGreaterThan(5);
});

test('1 MB subject and body go out unchanged', async () => {
	const megabyte = 'é😀,={{x}}\n'.repeat(100_000).slice(0, 1_000_000);
	const result = await runNode(sandbox, {
		parameters: sendParameters({ subject: '={{ $json.big }}', text: '={{ $json.big }}' }),
		items: [{ email: 'jane@customer.test', big: megabyte }],
	});
	expect(result.error).toBeUndefined();
	expect(sandbox.requests[0].body).toMatchObject({ subject: megabyte, text: megabyte });
});
