// @ts-check
'use strict';

/**
 * Any value an expression hands any parameter, one table over the operations: the item goes out
 * or fails alone as invalid input (or as the server's refusal); nothing throws out of the node,
 * no header can be injected, and the API key appears nowhere in output, errors or logs. What a
 * value is read as: test/unit/readers.test.js; that it goes out so, per operation: test/node/
 * (send-email, create-list, campaigns) and test/fixtures/send-email-template-key-value.
 */

const fc = require('fast-check');
const {
	API_KEY,
	addProfilesParameters,
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
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
	templates: { tmpl: ['plan'] },
	profiles: [{ profileId: PROFILE_ID, email: 'ann@customer.test' }],
	lists: [{ listId: LIST_ID, profiles: [{ email: 'ann@customer.test' }] }],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'C', subject: 'S', recepientList: [LIST_ID] }],
});

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
/** An address or anything else: without plain addresses, hardly any item would go out. */
const emailOrAny = fc.oneof(anyValue, {
	weight: 2,
	arbitrary: fc.nat().map((n) => `contact${n}@customer.test`),
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

/**
 * Each operation: its items' fields, one parameter variant, its parameters reading the fields by
 * expression, and whether an unknown ID may answer 404 (unexpected_response).
 * @type {Record<string, { item: fc.Arbitrary<any>, variant?: fc.Arbitrary<string>,
 *   parameters: (variant: any) => any, unknownId?: boolean }>}
 */
const OPERATIONS = {
	'Send Email: any recipient, subject, body and template variables': {
		item: fc.record({
			to: emailOrAny,
			subject: anyValue,
			text: anyValue,
			name: fc.oneof(anyValue, fc.constant('plan')),
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
	},
	'Add Profiles: any email, first and last name': {
		item: fc.record({ email: emailOrAny, firstName: anyValue, lastName: anyValue }),
		parameters: () =>
			addProfilesParameters({
				additionalFields: {
					firstName: '={{ $json.firstName }}',
					lastName: '={{ $json.lastName }}',
				},
				options: { batchSize: 3 },
			}),
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
	},
	'Send Campaign: any campaign ID': {
		item: fc.record({ campaignId: idsLike(CAMPAIGN_ID) }),
		parameters: () => sendCampaignParameters(),
		unknownId: true,
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
			},
		),
		{ numRuns: 40 },
	);
	// The generated values go out and are accepted often enough for the checks above to mean something.
	expect(accepted).toBeGreaterThan(5);
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
