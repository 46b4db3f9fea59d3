// @ts-check
'use strict';

/**
 * Email > Send and Wait for Response, the node's own part: the email (its links n8n's signed
 * resume URLs), the wait, the pages its `webhook` renders, the data it resumes with and what it
 * refuses before anything waits. The harness resumes as n8n's waiting webhooks do
 * (test/harness/n8n.js, createResumer); what only n8n itself shows (its signature check, HEAD, a
 * second press, a browser's post): test/e2e/send-and-wait.mjs.
 */

const fc = require('fast-check');
const {
	API_KEY,
	contacts,
	emailLinks,
	expectNoSecret,
	expectShippedSchema,
	runNode,
	sendAndWaitParameters,
	useSandbox,
} = require('../support');
const { core } = require('../harness/n8n').internals;
const { coreInternal, coreRequire } = require('../harness/resolve');

const sandbox = useSandbox();

const JANE = { email: 'jane@customer.test' };
// Who opens a link: a scanner, a client sending no User-Agent, a phone whose User-Agent holds
// "bot" (a Cubot). No User-Agent decides anything.
const AGENTS = [
	'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
	undefined,
	'Mozilla/5.0 (Linux; Android 12; CUBOT KINGKONG 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
];
/** @param {string | undefined} agent @returns {Record<string, string>} */
const userAgent = (agent) => (agent === undefined ? {} : { 'user-agent': agent });
// n8n's WAIT_INDEFINITELY: a wait without limit.
const FOREVER = new Date('3000-01-01T00:00:00.000Z');

/** The email the sandbox received, its only one. */
function sentEmail() {
	const requests = sandbox.requestsTo('/email/send');
	expect(requests).toHaveLength(1);
	return /** @type {Record<string, string>} */ (requests[0].body);
}

/** The links of the email's html, as the recipient's mail program reads them. */
const links = (html = sentEmail().html) => emailLinks(html);

/** Runs Send and Wait with these parameters for Jane; it must be waiting. */
async function waitingRun(/** @type {Record<string, unknown>} */ overrides = {}) {
	const result = await runNode(sandbox, {
		parameters: sendAndWaitParameters(overrides),
		items: [JANE],
	});
	expect(result.error).toBeUndefined();
	expect(result.waitTill).toBeDefined();
	return result;
}

describe('the email and the wait', () => {
	test('one email through POST /email/send, its html the escaped message and a signed Approve link; then the execution waits, without limit', async () => {
		const result = await waitingRun({ message: 'Refund <b>120 €</b> & "close" the case?' });

		const email = sentEmail();
		expect(email).toMatchObject({
			to: 'jane@customer.test',
			from: 'hello@example.com',
			subject: 'Refund for order 1042?',
		});
		expect(Object.keys(email).sort()).toEqual(['from', 'html', 'subject', 'to']);
		expect(email.html).toContain(
			'Refund &lt;b&gt;120 €&lt;/b&gt; &amp; &quot;close&quot; the case?',
		);
		expect(email.html).not.toContain('<b>');
		// Its links' labels and signatures: the answer table below.
		const url = new URL(links()[0].url);
		expect(url.pathname).toMatch(new RegExp(`^/webhook-waiting/\\d+/${result.node.id}$`));
		expect(url.searchParams.get('approved')).toBe('true');

		expect(result.waitTill).toEqual(FOREVER);
		expect(result.executedNodes).not.toContain('Success Sink');
	});

	test('an n8n without signed resume URLs (1.x before getSignedResumeUrl) gets its plain $execution.resumeUrl links', async () => {
		// n8n-core's NodeExecutionContext, where the method lives on both engines.
		const owner = Object.getPrototypeOf(Object.getPrototypeOf(core.ExecuteContext.prototype));
		const descriptor = Object.getOwnPropertyDescriptor(owner, 'getSignedResumeUrl');
		expect(descriptor).toBeDefined();
		delete owner.getSignedResumeUrl;
		try {
			const result = await waitingRun();
			const url = new URL(links()[0].url);
			expect(url.pathname).toMatch(new RegExp(`^/webhook-waiting/\\d+/${result.node.id}$`));
			expect(url.searchParams.get('approved')).toBe('true');
		} finally {
			Object.defineProperty(
				owner,
				'getSignedResumeUrl',
				/** @type {PropertyDescriptor} */ (descriptor),
			);
		}
	});

	test("one email for the whole input, with the first item's values: the execution waits once", async () => {
		const result = await runNode(sandbox, {
			parameters: sendAndWaitParameters(),
			items: contacts(3),
		});
		expect(result.waitTill).toBeDefined();
		expect(sentEmail().to).toBe('contact0@customer.test');
		// While it waits, its output is its input, each item paired to itself.
		expect(result.success.map((item) => item.pairedItem)).toEqual(
			[0, 1, 2].map((item) => ({ item })),
		);
	});

	test('Limit Wait Time, after an interval: waitTill is that far ahead; when it passes, the input items go on without "data"', async () => {
		const before = Date.now();
		const result = await waitingRun({
			options: {
				limitWaitTime: {
					values: { limitType: 'afterTimeInterval', resumeAmount: 2, resumeUnit: 'hours' },
				},
			},
		});
		const ahead = Number(result.waitTill) - before;
		expect(ahead).toBeGreaterThanOrEqual(2 * 3_600_000);
		expect(ahead).toBeLessThan(2 * 3_600_000 + 60_000);

		const resumed = await result.passWaitLimit();
		expect(resumed.error).toBeUndefined();
		expect(resumed.success.map((/** @type {any} */ item) => item.json)).toEqual([JANE]);
		expect(sandbox.requestsTo('/email/send')).toHaveLength(1);
	});

	test('Limit Wait Time, at a specified time: waitTill is that time; a value that is no date fails before sending', async () => {
		const at = '2031-05-04T10:00:00.000Z';
		const limit = (/** @type {string} */ maxDateAndTime) => ({
			options: { limitWaitTime: { values: { limitType: 'atSpecifiedTime', maxDateAndTime } } },
		});
		expect((await waitingRun(limit(at))).waitTill).toEqual(new Date(at));
		sandbox.reset();

		const result = await runNode(sandbox, {
			parameters: sendAndWaitParameters(limit('next Tuesday')),
			items: [JANE],
		});
		expect(result.error?.message).toBe(
			'Max Date and Time is not a date. Fix it before trying again.',
		);
		expect(result.waitTill).toBeUndefined();
		expect(sandbox.requests).toHaveLength(0);
	});
});

describe('sending as Send Email does', () => {
	test("Retry On Fail sends once: a 500 on the email fails the node, n8n's two retries send nothing, nothing waits", async () => {
		sandbox.injectFaults([{ status: 500 }]);
		const result = await runNode(sandbox, {
			parameters: sendAndWaitParameters(),
			items: [JANE],
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1,
		});
		expect(result.error?.description).toMatch(/may have been queued/);
		expect(sandbox.requestsTo('/email/send')).toHaveLength(1);
		expect(result.waitTill).toBeUndefined();
	});

	test('as the plain BasicsEngage Tool of an agent it refuses, sending nothing: an agent cannot wait for an email', async () => {
		const result = await runNode(sandbox, {
			parameters: sendAndWaitParameters({ to: 'jane@customer.test' }),
			toolCalls: [{}],
		});
		expect(result.toolAnswers[0].thrown ?? result.toolAnswers[0].answer).toMatch(
			/cannot run as an AI tool/,
		);
		expect(sandbox.requests).toHaveLength(0);
	});
});

const options = (/** @type {string[]} */ ...names) => ({
	values: names.map((option) => ({ option })),
});
// Every field type Custom Form offers, as n8n's Form node defines them.
const FORM_FIELDS = [
	{ fieldLabel: 'Delivery date', fieldType: 'date', requiredField: true },
	{ fieldLabel: 'Name', fieldType: 'text', requiredField: true, placeholder: 'Jane Doe' },
	{ fieldLabel: 'Reason', fieldType: 'textarea' },
	{ fieldLabel: 'Email', fieldType: 'email' },
	{ fieldLabel: 'Amount', fieldType: 'number', requiredField: true },
	{ fieldLabel: 'Slot', fieldType: 'dropdown', fieldOptions: options('Morning', 'Evening') },
	{
		fieldLabel: 'Rooms',
		fieldType: 'dropdown',
		multiselect: true,
		fieldOptions: options('Hall', 'Kitchen', 'Attic'),
	},
	{ fieldLabel: 'Extras', fieldType: 'checkbox', fieldOptions: options('Gift wrap', 'Call first') },
	{ fieldLabel: 'Carrier', fieldType: 'radio', fieldOptions: options('DHL', 'UPS') },
	{ fieldLabel: 'PIN', fieldType: 'password' },
	{ fieldType: 'hiddenField', fieldName: 'ticket', fieldValue: 'T-17' },
];
// A full answer as the browser posts it (each field as field-<index>, checkboxes repeated) and n8n
// hands over the multipart post's fields: under `data`, a repeated field as a list.
const FULL_POST = {
	'field-0': '2031-05-04',
	'field-1': '  Jane Doe ',
	'field-2': 'Ring twice\nthen wait',
	'field-3': 'jane@customer.test',
	'field-4': '120.5',
	'field-5': 'Evening',
	'field-6': ['Hall', 'Attic'],
	'field-7': ['Gift wrap', 'Call first'],
	'field-8': 'UPS',
	'field-9': '1234',
};
const FULL_ANSWER = {
	'Delivery date': '2031-05-04',
	Name: 'Jane Doe',
	Reason: 'Ring twice\nthen wait',
	Email: 'jane@customer.test',
	Amount: 120.5,
	Slot: 'Evening',
	Rooms: ['Hall', 'Attic'],
	Extras: ['Gift wrap', 'Call first'],
	Carrier: 'UPS',
	PIN: '1234',
	ticket: 'T-17',
	respondedAt: expect.any(String),
};
const fieldsForm = (/** @type {unknown[]} */ fields = FORM_FIELDS) => ({
	responseType: 'customForm',
	formFields: { values: fields },
});
// The same fields as Define Form > Using JSON takes them: options as a plain list, and the hidden
// field named by fieldLabel (n8n 1.x's JSON has no fieldName).
const jsonForm = (/** @type {any[]} */ fields = FORM_FIELDS) => ({
	responseType: 'customForm',
	defineForm: 'json',
	jsonOutput: JSON.stringify(
		fields.map(({ fieldName, ...field }) => ({
			...field,
			...(fieldName && { fieldLabel: fieldName }),
			...(field.fieldOptions && { fieldOptions: field.fieldOptions.values }),
		})),
	),
});

/** Waits with a custom form; returns the run and its one link, the form's. */
async function waitingForm(/** @type {Record<string, unknown>} */ overrides = fieldsForm()) {
	const result = await waitingRun(overrides);
	const [respond, ...others] = links();
	expect(others).toEqual([]);
	return { result, url: respond.url, label: respond.label };
}

describe('custom form: the link opens a form with the fields the workflow sets; its POST is checked', () => {
	test.each([
		['Using Fields Below', fieldsForm()],
		['Using JSON', jsonForm()],
	])(
		// An input per field, filled in Chromium by test/e2e/send-and-wait.mjs; here what it does not see.
		'defined %s: one multipart form posting to the same signed link, placeholders and required fields set, the hidden field absent',
		async (_how, parameters) => {
			const { result, url } = await waitingForm(parameters);
			const form = await result.callWebhook({ url });
			expect(String(form.body).match(/<form[^>]*>/g)).toEqual([
				'<form method="post" enctype="multipart/form-data">',
			]);
			expect(form.body).toContain('<select id="field-6" name="field-6" multiple');
			expect(form.body).toContain('placeholder="Jane Doe"');
			expect(String(form.body).match(/ required/g)).toHaveLength(3); // date, text, number
			// The hidden field is the workflow's: not in the page at all.
			expect(form.body).not.toMatch(/T-17|field-10/);
		},
	);

	// What is refused: test/unit/custom-form.test.js.
	test('a bad post (a required text left blank) shows the form again with the reason and the answers kept, and records nothing', async () => {
		const { result, url } = await waitingForm();
		const body = { data: { ...FULL_POST, 'field-1': '   ' } };
		const refused = await result.callWebhook({ url, method: 'POST', body });
		expect(refused.resumed).toBe(false);
		expect(refused.body).toContain('Nothing was recorded yet');
		expect(refused.body).toContain('Name is required');
		expect(refused.body).toContain('<form method="post" enctype="multipart/form-data">');
		expect(refused.body).toContain('value="jane@customer.test"');
		expect(refused.body).not.toContain('value="1234"'); // the password is not sent back
	});

	test('labels, options, placeholders, the title and the description are escaped on the form page and in its reasons', async () => {
		const evil = '<img src=x onerror=alert(1)>"\'&';
		const escaped = '&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;';
		const { result, url } = await waitingForm({
			...fieldsForm([
				{ fieldLabel: `Name ${evil}`, fieldType: 'text', requiredField: true, placeholder: evil },
				{ fieldLabel: 'Pick', fieldType: 'radio', fieldOptions: options(evil) },
			]),
			options: { responseFormTitle: `Title ${evil}`, responseFormDescription: `About ${evil}` },
		});
		const pages = [
			(await result.callWebhook({ url })).body,
			(await result.callWebhook({ url, method: 'POST', body: { data: { 'field-1': 'other' } } }))
				.body,
		];
		for (const body of pages) {
			expect(body).not.toContain('<img');
			for (const text of [`Name ${escaped}`, `Title ${escaped}`, `About ${escaped}`]) {
				expect(body).toContain(text);
			}
			expect(body).toContain(`placeholder="${escaped}"`);
			expect(body).toContain(`value="${escaped}"`);
		}
		expect(pages[1]).toContain(`<li>Name ${escaped} is required</li>`);
		// The option's text as the browser posts it back (unescaped) is the answer.
		const answer = await result.callWebhook({
			url,
			method: 'POST',
			body: { data: { 'field-0': 'Jane', 'field-1': evil } },
		});
		expect(answer.result.success[0].json.data).toMatchObject({ Pick: evil });
	});

	test.each([
		['Message Button Label, title, description and button label', 'customForm'],
		['the same options', 'freeText'],
	])('%s set the link and the page (%s)', async (_what, responseType) => {
		const { result, url, label } = await waitingForm({
			...fieldsForm(),
			responseType,
			options: {
				messageButtonLabel: 'Pick a date',
				responseFormTitle: 'Your delivery',
				responseFormDescription: 'When may we come?',
				responseFormButtonLabel: 'Send my answer',
			},
		});
		expect(label).toBe('Pick a date');
		const { body } = await result.callWebhook({ url });
		expect(body).toContain('<title>Your delivery</title>');
		expect(body).toContain('When may we come?');
		expect(body).toMatch(/<button[^>]*>Send my answer<\/button>/);
		expect(body).not.toContain('Refund 120 EUR to Jane?');
	});

	// What cannot work: test/unit/custom-form.test.js.
	test('a form that cannot work (a file field) fails every item before sending; nothing waits', async () => {
		const result = await runNode(sandbox, {
			parameters: sendAndWaitParameters(fieldsForm([{ fieldLabel: 'Photo', fieldType: 'file' }])),
			items: [JANE, JANE],
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => [item.pairedItem, item.json.details.kind])).toEqual([
			[{ item: 0 }, 'invalid_input'],
			[{ item: 1 }, 'invalid_input'],
		]);
		expect(result.errors[0].json.error).toContain(
			'Form field "Photo" has the type "file", which this node does not offer',
		);
		expect(sandbox.requests).toHaveLength(0);
		expect(result.waitTill).toBeUndefined();
	});
});

/** An ISO time between `before` and now. @param {unknown} value @param {number} before */
function expectRespondedSince(value, before) {
	expect(typeof value === 'string' && new Date(value).toISOString()).toBe(value);
	const at = new Date(/** @type {string} */ (value)).getTime();
	expect(at).toBeGreaterThanOrEqual(before);
	expect(at).toBeLessThanOrEqual(Date.now());
}

const DOUBLE = { approvalOptions: { values: { approvalType: 'double' } } };

describe("the answer: opening a link answers nothing, only its page's button does (mail scanners open every link); n8n calls the webhook, never execute, so nothing is sent again", () => {
	test.each([
		['approval, Approve only', {}, ['Approve'], {}, { approved: true }],
		[
			'approval, Approve and Decline: Approve',
			DOUBLE,
			['Decline', 'Approve'],
			{},
			{ approved: true },
		],
		[
			'approval, Approve and Decline: Decline',
			DOUBLE,
			['Decline', 'Approve'],
			{ press: 0 },
			{ approved: false },
		],
		[
			'free text',
			{ responseType: 'freeText', message: 'Why <not>?' },
			['Respond'],
			{
				body: { text: 'Yes' },
				page: ['Why &lt;not&gt;?', '<form method="post">', '<textarea name="text"'],
			},
			{ text: 'Yes' },
		],
		[
			'custom form, defined Using Fields Below',
			fieldsForm(),
			['Respond'],
			{ body: { data: FULL_POST } },
			FULL_ANSWER,
		],
		[
			'custom form, defined Using JSON',
			jsonForm(),
			['Respond'],
			{ body: { data: FULL_POST } },
			FULL_ANSWER,
		],
	])(
		'%s: its signed links, opened by anyone, record nothing; the press resumes with { data: { ...answer, respondedAt } } and a "recorded" page; no page or answer holds the key',
		/** @param {string} _ @param {Record<string, unknown>} parameters @param {string[]} labels @param {{ press?: number, body?: Record<string, unknown>, page?: string[] }} answering @param {object} data */
		async (_, parameters, labels, { press = -1, body, page = [] }, data) => {
			const result = await waitingRun(parameters);
			expect(links().map((link) => link.label)).toEqual(labels);
			const pages = [];
			for (const { url } of links()) {
				expect(new URL(url).searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
				for (const agent of AGENTS) {
					const opened = await result.callWebhook({ url, headers: userAgent(agent) });
					expect([agent, opened.resumed]).toEqual([agent, false]);
					expect(JSON.stringify(opened.body)).not.toContain('recorded');
					pages.push(opened.body);
				}
			}
			for (const text of page) expect(pages[0]).toContain(text);
			const url = String(links().at(press)?.url);
			const before = Date.now();
			const headers = userAgent(AGENTS[2]);
			const answer = await result.callWebhook({ url, method: 'POST', headers, body });
			expect(answer.resumed).toBe(true);
			expect(answer.body).toContain('Your response has been recorded');
			const [{ json }] = answer.result.success;
			expect(json).toEqual({ data: { ...data, respondedAt: expect.any(String) } });
			// The schema names the fields of approval and free text; a form's are the workflow's.
			if (parameters.responseType !== 'customForm') expectShippedSchema('email/sendAndWait', json);
			expectRespondedSince(json.data.respondedAt, before);
			expect(JSON.stringify([sentEmail(), pages, answer.body])).not.toContain(API_KEY);
			expectNoSecret(answer.result, API_KEY);
		},
	);

	test('the page says what is answered (the subject, the button label, escaped) and has one button, posting to the same signed link', async () => {
		const result = await waitingRun({
			subject: 'Refund <120 €>?',
			approvalOptions: {
				values: { approvalType: 'double', approveLabel: 'Refund & close', disapproveLabel: 'No' },
			},
		});
		const [decline, refund] = links();
		for (const [button, label] of /** @type {const} */ ([
			[refund, 'Refund &amp; close'],
			[decline, 'No'],
		])) {
			const { body } = await result.callWebhook({ url: button.url });
			expect(body).toContain('<title>Refund &lt;120 €&gt;?</title>');
			expect(body).toContain(`<strong>${label}</strong>`);
			// No action: the browser posts to the page's own URL, its query and signature included.
			expect(String(body).match(/<form[^>]*>/g)).toEqual(['<form method="post">']);
			expect(String(body).match(/<button[^>]*>[^<]*<\/button>/g)).toEqual([
				expect.stringContaining(`>${label}</button>`),
			]);
			expect(body).not.toMatch(/<a |<script|<input/);
		}
	});
});

/** The link with this query instead, signed as n8n signs its links: what a client may call. */
function signedWith(/** @type {string} */ url, /** @type {Record<string, string>} */ query) {
	const { generateUrlSignature, prepareUrlForSigning } = coreInternal(
		'dist/utils/signature-helpers',
	);
	const { hmacSignatureSecret } = coreRequire('@n8n/di').Container.get(core.InstanceSettings);
	const target = new URL(url);
	target.search = new URLSearchParams(query).toString();
	target.searchParams.set(
		'signature',
		generateUrlSignature(prepareUrlForSigning(target), hmacSignatureSecret),
	);
	return target.toString();
}

describe('a request without a valid answer gets a page asking again, never a throw (n8n would end the wait with the error)', () => {
	// Month 13, day 0, day and month swapped.
	const dates = ['2026-13-01', '2026-00-00', '2026-31-12'].map((day) => ({
		body: { data: { ...FULL_POST, 'field-0': day } },
	}));
	const noBody = [{}, { body: null }];
	/** @type {Array<{ query: Record<string, string> }>} */
	const forged = [{ query: { approved: 'false' } }, { query: {} }];
	test.each([
		['a Custom Form date of 2026-13-01, 2026-00-00 or 2026-31-12', fieldsForm(), dates],
		['a Custom Form POST with no body, or JSON null,', fieldsForm(), noBody],
		['a Free Text POST with no body, or JSON null,', { responseType: 'freeText' }, noBody],
		['an Approve Only link changed to say Decline, or without its answer,', {}, forged],
	])(
		'%s asks again, instead of throwing or recording: the wait goes on',
		/** @param {string} _ @param {Record<string, unknown>} parameters @param {Array<{ query?: Record<string, string>, body?: unknown }>} posts */
		async (_, parameters, posts) => {
			const result = await waitingRun(parameters);
			const { url } = /** @type {{ url: string }} */ (links().at(-1));
			for (const { query, body } of posts) {
				const signed = query ? signedWith(url, query) : url;
				const refused = await result.callWebhook({ url: signed, method: 'POST', body });
				expect(refused).toMatchObject({ status: 200, resumed: false });
				expect(refused.body).toMatch(/Nothing was recorded yet|<textarea|holds no answer/);
			}
		},
	);
});

const nonBlank = fc.string({ minLength: 1 }).filter((text) => text.trim() !== '');
const same = (/** @type {unknown} */ value) => [value, value];
const isoDay = (/** @type {Date} */ date) => same(date.toISOString().slice(0, 10));
const typed = (/** @type {number} */ n) => [`${n}`, Number(`${n}`)];
const DAYS = fc.date({ min: new Date(0), max: new Date('9999-12-31'), noInvalidDate: true });
/** @type {Record<string, fc.Arbitrary<any>[]>} per field type: [posts a person may make, each with what the workflow gets; posts it refuses] */
const VALUES = {
	text: [nonBlank.map((text) => [text, text.trim()])],
	textarea: [nonBlank.map(same)],
	password: [nonBlank.map(same)],
	email: [fc.emailAddress().map(same), fc.constantFrom('jane@', 'jane customer.test')],
	number: [fc.double({ noNaN: true, noDefaultInfinity: true }).map(typed), fc.constant('twelve')],
	date: [DAYS.map(isoDay), fc.constantFrom('2026-13-01', '2026-00-10', '2026-31-12', '2026-02-30')],
};
// Refused by any field: no text, too long, a list holding a number.
const NOT_TEXT = fc.constantFrom(42, { nested: 'x' }, 'x'.repeat(10_001), ['a', 7]);
/** @type {Record<string, string>} */
const EMPTY = { text: '', textarea: '', password: '', email: '' };
const isMultiple = (/** @type {any} */ f) => f.fieldType === 'checkbox' || f.multiselect;
/** A field not posted: what the workflow gets, or the problem when it is required. @param {any} field */
function notPosted(field) {
	if (field.fieldType === 'hiddenField') return { recorded: field.fieldValue };
	if (field.requiredField) return { problems: ['required missing'] };
	return { recorded: isMultiple(field) ? [] : (EMPTY[field.fieldType] ?? null) };
}
/** A field's post: what the workflow gets, or the problem it is refused for. @param {any} field */
function fieldPost(field) {
	if (field.fieldType === 'hiddenField')
		return fc.string().map((posted) => ({ posted, ...notPosted(field) }));
	const options = field.fieldOptions?.values.map((/** @type {any} */ { option }) => option);
	const choice =
		options &&
		(isMultiple(field) ? fc.subarray(options, { minLength: 1 }) : fc.constantFrom(...options));
	const [good, bad] = choice
		? [choice.map(same), fc.constantFrom('Midnight', ['Hall', 'Hall'])]
		: VALUES[field.fieldType];
	const [odds, problems] = field.fieldType === 'date' ? [2, ['bad date']] : [16, ['bad value']];
	return fc.oneof(
		{
			weight: odds,
			arbitrary: good.map((/** @type {[unknown, unknown]} */ [posted, recorded]) => ({
				posted,
				recorded,
			})),
		},
		fc.constantFrom(undefined, '', ' \n').map((posted) => ({ posted, ...notPosted(field) })),
		fc.oneof(bad ?? NOT_TEXT, NOT_TEXT).map((posted) => ({ posted, problems })),
	);
}
/** The fields' posts, as n8n hands over a multipart post, with what it records or its problems. */
const formPost = (/** @type {any[]} */ fields, /** @type {any[]} */ posts) => ({
	body: { data: Object.fromEntries(posts.map(({ posted }, index) => [`field-${index}`, posted])) },
	problems: [...new Set(posts.flatMap((post) => post.problems ?? []))],
	recorded: Object.fromEntries(
		fields.map((field, index) => [field.fieldLabel ?? field.fieldName, posts[index].recorded]),
	),
});
// Bodies without a form, as n8n may hand them over: none, JSON null, a text, a number, a list...
const NO_FORM = fc.oneof(
	fc.constantFrom(undefined, null, '', 'text=Yes', [FULL_POST]),
	fc.anything().filter((body) => !(body instanceof Object && 'data' in body)),
);
const APPROVED = fc.constantFrom(undefined, 'true', 'false', 'TRUE');
const TEXTS = fc.oneof(nonBlank, nonBlank, fc.constant(' \n'), fc.array(nonBlank));
const requiredOrNot = (/** @type {any} */ field) =>
	fc.boolean().map((requiredField) => ({ ...field, requiredField }));
/**
 * Per response type: its parameters; posts with what they record, or the problems they are
 * refused for, each of which the property must reach.
 * @type {Record<string, { parameters: fc.Arbitrary<any>, post: (set: any) => fc.Arbitrary<any>, refusals: string[] }>}
 */
const RESPONSE_TYPES = {
	'Approval (Approve Only, Approve and Decline)': {
		parameters: fc.constantFrom({}, DOUBLE),
		post: (set) =>
			fc.tuple(APPROVED, fc.anything()).map(([approved, body]) => ({
				query: approved && { approved },
				body,
				problems:
					approved === 'true' || (approved === 'false' && set === DOUBLE) ? [] : ['not offered'],
				recorded: { approved: approved === 'true' },
			})),
		refusals: ['not offered'],
	},
	'Free Text': {
		parameters: fc.constant({ responseType: 'freeText' }),
		post: () =>
			fc.oneof(fc.record({ text: TEXTS }), NO_FORM).map((/** @type {any} */ body) => ({
				body,
				problems: typeof body?.text === 'string' && body.text.trim() !== '' ? [] : ['no text'],
				recorded: { text: body?.text },
			})),
		refusals: ['no text'],
	},
	'Custom Form': {
		// Every type of field, each required or not.
		parameters: fc.tuple(...FORM_FIELDS.map(requiredOrNot)).map(fieldsForm),
		post: ({ formFields: { values: fields } }) => {
			const posts = fc.tuple(...fields.map(fieldPost)).map((entries) => formPost(fields, entries));
			const { problems, recorded } = formPost(fields, fields.map(notPosted));
			const noForm = problems.length > 0 ? ['no form'] : [];
			const none = NO_FORM.map((body) => ({ body, problems: noForm, recorded }));
			return fc.oneof(posts, posts, posts, none);
		},
		refusals: ['bad date', 'bad value', 'required missing', 'no form'],
	},
};
// Only GET and POST reach the node (n8n answers HEAD itself); headers and query no type reads.
const REQUEST = fc.record({
	method: fc.constantFrom('POST', 'POST', 'GET'),
	headers: fc.dictionary(
		fc.constantFrom('content-type', 'user-agent'),
		fc.oneof(fc.constantFrom('multipart/form-data; boundary=x', 'application/json'), fc.string()),
	),
	query: fc.dictionary(fc.constantFrom('text', 'field-0', 'data'), fc.string()),
});

test.each(Object.keys(RESPONSE_TYPES))(
	'property, %s: whatever headers, query and body a client sends, the webhook never throws; only a POST of a valid answer is recorded, as posted; anything else leaves the wait on (a refused POST gets a page asking again); each case reached 5 times or more',
	async (type) => {
		const { parameters, post, refusals } = RESPONSE_TYPES[type];
		const requests = (/** @type {any} */ set) =>
			fc.array(fc.tuple(REQUEST, post(set)), { minLength: 1, maxLength: 8 });
		/** @type {Record<string, number>} */
		const reached = {};
		const property = fc.asyncProperty(
			parameters.chain((set) => fc.tuple(fc.constant(set), requests(set))),
			async ([set, requests]) => {
				sandbox.reset();
				const result = await waitingRun(set);
				const { url } = /** @type {{ url: string }} */ (links().at(-1));
				for (const [{ method, headers, query }, { body, ...post }] of requests) {
					const signed = signedWith(url, { ...query, ...post.query });
					const answer = await result.callWebhook({ url: signed, method, headers, body });
					const cases = method === 'GET' ? ['opened'] : post.problems;
					for (const name of cases.length > 0 ? cases : ['recorded'])
						reached[name] = (reached[name] ?? 0) + 1;
					expect([cases, answer.status, answer.resumed]).toEqual([cases, 200, cases.length === 0]);
					// A refused post gets a page asking again, instead of n8n ending the wait with an error.
					if (method === 'POST' && cases.length > 0)
						expect(answer.body).toMatch(/Nothing was recorded yet|<textarea|holds no answer/);
					if (answer.resumed) {
						const { data } = answer.result.success[0].json;
						return expect(data).toEqual({ ...post.recorded, respondedAt: expect.any(String) });
					}
				}
			},
		);
		// A fixed seed (as test/reliability/model.test.js): the counts below hold at every run.
		await fc.assert(property, { seed: 22, numRuns: 30 });
		for (const name of ['recorded', 'opened', ...refusals])
			expect([name, reached[name] >= 5]).toEqual([name, true]);
	},
);
