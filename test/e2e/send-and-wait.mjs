// Send and Wait for Response in a real n8n: what only the server shows. The refund examples
// (examples/approve-refund.json, approve-refund-form.json), started by a real form submission,
// answered through n8n's own waiting webhooks and signature check: links opened as a scanner does
// (GET and HEAD, any User-Agent) and by a person in Chromium. The node's own logic (the email, the
// pages, the answer's shape, what is refused) is test/node/send-and-wait.test.js.
import http from 'node:http';

import { waitForForm } from '../../dev/n8n-setup.mjs';
import {
	latestExecutionId,
	listExecutionsSince,
	nodeOutput,
	submitForm,
	waitForExecution,
} from './executions.mjs';
import { answers, env } from './shared.mjs';
import {
	buildWorkflow,
	CREDENTIALS,
	exampleVariant,
	importWorkflow,
	launchBrowser,
	NODE_TYPE,
	until,
} from './helpers.mjs';

const REFUND = 'beExampleRefund1';
const ASK = 'Ask finance to approve';
const BROWSER =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel; +https://www.barracuda.com)';
const RECORDED = 'Your response has been recorded';
const RESPONDED = { respondedAt: expect.any(String) };

let browser;
beforeAll(async () => (browser = await launchBrowser()), 300_000);
afterAll(() => browser?.close(), 60_000);

const emailsSent = () => env.sandbox.requests.filter((r) => r.path === '/email/send');
const since = (workflowId, before) =>
	listExecutionsSince(env.rest, workflowId, { afterId: before });
const ended = (workflowId, before, timeoutMs) =>
	waitForExecution(env.rest, workflowId, { afterId: before, n8nDir: env.n8nDir, timeoutMs });

/** Submits a refund form; returns the id of the execution once it waits for the answer. */
async function requestRefund(workflowId = REFUND, formPath = 'basicsengage-refund') {
	const before = await latestExecutionId(env.rest, workflowId);
	const values = ['1042', '120', 'jane@customer.test'];
	expect((await submitForm(`${env.n8n.url}/form/${formPath}`, values)).status).toBe(200);
	const waits = async () => (await since(workflowId, before)).find((e) => e.status === 'waiting');
	return { id: (await until(waits, 'no refund execution waited')).id, before };
}

/** The email's links by label, as a mail program reads them. */
function emailLinks() {
	const [email] = emailsSent();
	const links = email.body.html.matchAll(/<a href="([^"]+)"[^>]*>([^<]*)<\/a>/g);
	return Object.fromEntries(
		[...links].map(([, href, label]) => [label, href.replaceAll('&amp;', '&')]),
	);
}

const open = (url, method = 'GET', userAgent = BROWSER) =>
	fetch(url, { method, headers: { 'user-agent': userAgent } });

/** A mail gateway or link scanner opens every link, GET and HEAD, as itself and posing as a browser. */
async function scanLinks(urls) {
	for (const url of urls) {
		for (const userAgent of [SCANNER, BROWSER]) {
			for (const method of ['HEAD', 'GET']) {
				const res = await open(url, method, userAgent);
				expect([method, res.status]).toEqual([method, 200]);
				expect(await res.text()).not.toContain(RECORDED);
			}
		}
	}
}

/** A person opens the link in Chromium, fills in the page (if it is a form), presses its button. */
async function answerInBrowser(url, fill = async () => {}) {
	const page = await browser.context.newPage();
	try {
		await page.goto(url);
		await fill(page);
		const [posted] = await Promise.all([
			page.waitForResponse((res) => res.request().method() === 'POST'),
			page.locator('button').click(),
		]);
		expect(posted.status()).toBe(200);
		await page.waitForLoadState();
		return await page.textContent('body');
	} finally {
		await page.close();
	}
}

/** The refund example as its own published workflow and form, its Send and Wait node changed. */
async function publishVariant(tag, change) {
	const triggerPath = `basicsengage-refund-${tag}`;
	const variant = { id: `beExampleRef${tag}`, label: tag, triggerPath };
	const { workflow, node } = exampleVariant(REFUND, variant);
	change(node(ASK).parameters);
	await importWorkflow(env, workflow);
	await waitForForm(`${env.n8n.url}/form/${triggerPath}`);
	return { workflowId: workflow.id, ...(await requestRefund(workflow.id, triggerPath)) };
}

test("a scanner opening every link (GET, HEAD, any User-Agent) and a changed or unsigned link (n8n's 401) answer nothing; a person's press in Chromium resumes the run once, through the server, with approved: true", async () => {
	const { before } = await requestRefund();
	const links = emailLinks();
	await scanLinks(Object.values(links));
	const forged = new URL(links.Decline);
	forged.searchParams.set('approved', 'true');
	const unsigned = new URL(links.Decline);
	unsigned.searchParams.delete('signature');
	for (const url of [forged, unsigned]) {
		for (const method of ['GET', 'POST']) expect((await open(url, method)).status).toBe(401);
	}
	expect((await since(REFUND, before)).map((e) => e.status)).toEqual(['waiting']);

	expect(await answerInBrowser(links.Refund)).toContain(RECORDED);
	const execution = await ended(REFUND, before);
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: true, ...RESPONDED } }]);
	expect(nodeOutput(execution, 'Refund approved')).toEqual([
		{ nextStep: 'Refund order 1042: put your payment step here' },
	]);
	// Once: a second press, or the other button, resumes nothing more.
	for (const url of [links.Refund, links.Decline]) {
		expect(await (await open(url, 'POST')).text()).not.toContain(RECORDED);
	}
	expect(await since(REFUND, before)).toHaveLength(1);
	expect((await ended(REFUND, before)).runData[ASK]).toHaveLength(1);
	expect(emailsSent()).toHaveLength(1);
});

test("the Decline press resumes with approved: false: the example's decline branch runs", async () => {
	const { before } = await requestRefund();
	expect(await answerInBrowser(emailLinks().Decline)).toContain(RECORDED);
	const execution = await ended(REFUND, before);
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: false, ...RESPONDED } }]);
	expect(nodeOutput(execution, 'Declined or no answer')).toEqual([
		{ nextStep: 'Declined: tell jane@customer.test' },
	]);
});

/**
 * A chat model on loopback speaking OpenAI's chat completions API: it calls the first tool it is
 * offered (arguments that fit its schema), and once a tool has answered, it says "Done.".
 */
async function startFakeModel() {
	const fill = (schema) =>
		schema?.type === 'object'
			? Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fill(v)]))
			: ({ number: 1, integer: 1, boolean: true }[schema?.type] ?? 'yes');
	const calls = [];
	const server = http.createServer(async (req, res) => {
		let raw = '';
		for await (const chunk of req) raw += chunk;
		const body = JSON.parse(raw || '{}');
		calls.push(body);
		const tool = body.tools?.[0]?.function;
		const done = body.messages?.at(-1)?.role === 'tool' || !tool;
		const call = tool && { name: tool.name, arguments: JSON.stringify(fill(tool.parameters)) };
		const calling = [{ id: `call_${calls.length}`, type: 'function', function: call }];
		const message = { role: 'assistant', content: done ? 'Done.' : null };
		const choice = { index: 0, message: { ...message, tool_calls: done ? undefined : calling } };
		const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
		const completion = { id: `chatcmpl-${calls.length}`, object: 'chat.completion', usage };
		const created = Math.floor(Date.now() / 1000);
		const choices = [{ ...choice, finish_reason: done ? 'stop' : 'tool_calls' }];
		res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify({ ...completion, created, model: body.model, choices }));
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}/v1`,
		calls,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

/** A BasicsEngage tool node (type `${NODE_TYPE}${variant}`) sending from hello@example.com. */
const emailTool = (name, variant, link, parameters) => ({
	name,
	type: `${NODE_TYPE}${variant}`,
	parameters: { resource: 'email', from: 'hello@example.com', ...parameters },
	credentials: CREDENTIALS,
	link,
});

// n8n 2.x derives the human-review tool (basicsEngageHitlTool) from the node; 1.x has none.
(process.env.N8N_DEV_RUNTIME === 'v1' ? test.skip : test)(
	"n8n 2.x: the AI Agent's gated tool (Send Email) waits for the human-review email; a scanner opening its link changes nothing; a person's press runs the tool once",
	async () => {
		const model = await startFakeModel();
		try {
			const data = { apiKey: 'sk-e2e-fake', url: model.url };
			const fakeModel = { name: 'Fake model (e2e)', type: 'openAiApi', data };
			const { id } = await env.rest.post('/rest/credentials', fakeModel);
			const workflow = buildWorkflow('beE2eAgentGate01', "a person approves the agent's email", [
				{
					name: 'Start',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					parameters: { path: 'basicsengage-agent-gate' },
				},
				{
					name: 'AI Agent',
					type: '@n8n/n8n-nodes-langchain.agent',
					typeVersion: 3.1,
					parameters: {
						promptType: 'define',
						text: 'Send Jane the welcome email.',
						options: { enableStreaming: false },
					},
				},
				{
					name: 'Model',
					type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
					typeVersion: 1.2,
					parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
					credentials: { openAiApi: { id, name: fakeModel.name } },
					link: ['AI Agent', 'ai_languageModel'],
				},
				emailTool('Ask finance', 'HitlTool', ['AI Agent', 'ai_tool'], {
					operation: 'sendAndWait',
					to: 'finance@customer.test',
					subject: 'May the agent send an email?',
				}),
				emailTool('Send Welcome', 'Tool', ['Ask finance', 'ai_tool'], {
					operation: 'send',
					to: 'jane@customer.test',
					subject: 'Welcome',
					content: 'text',
					text: 'Hello!',
				}),
			]);
			await importWorkflow(env, workflow);

			// One call starts one run: n8n answers 404 until it has registered the webhook.
			const start = async () => (await fetch(`${env.n8n.url}/webhook/basicsengage-agent-gate`)).ok;
			await until(start, 'the agent webhook answered no 200');
			const waits = async () => (await since(workflow.id, 0)).at(-1)?.status === 'waiting';
			await until(waits, 'the agent run did not wait');
			expect(model.calls[0].tools).toHaveLength(1);
			const sent = () => emailsSent().map((r) => [r.body.to, r.body.subject]);
			const ask = ['finance@customer.test', 'May the agent send an email?'];
			expect(sent()).toEqual([ask]);
			const { Approve } = emailLinks();
			await scanLinks([Approve]);
			expect((await since(workflow.id, 0)).map((e) => e.status)).toEqual(['waiting']);
			expect(sent()).toEqual([ask]);

			expect(await answerInBrowser(Approve)).toContain(RECORDED);
			const execution = await waitForExecution(env.rest, workflow.id, { n8nDir: env.n8nDir });
			expect(execution.status).toBe('success');
			expect(nodeOutput(execution, 'AI Agent')).toEqual([{ output: 'Done.' }]);
			expect(sent()).toEqual([ask, ['jane@customer.test', 'Welcome']]);
			expect(await since(workflow.id, 0)).toHaveLength(1);
		} finally {
			await model.close();
		}
	},
);

test('free text: the Respond link opens a form page; the form, posted as a browser posts it (urlencoded, to the page URL), resumes with the text', async () => {
	const { workflowId, before } = await publishVariant('f7f7', (ask) => {
		ask.responseType = 'freeText';
		delete ask.approvalOptions;
	});
	const { Respond } = emailLinks();
	await scanLinks([Respond]);
	const posted = await fetch(Respond, {
		method: 'POST',
		headers: { 'user-agent': BROWSER, 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams({ text: 'Only half: the box was opened' }).toString(),
	});
	expect(await posted.text()).toContain(RECORDED);
	const execution = await ended(workflowId, before);
	expect(nodeOutput(execution, ASK)).toEqual([
		{ data: { text: 'Only half: the box was opened', ...RESPONDED } },
	]);
	expect(emailsSent()).toHaveLength(1);
});

// Started before the first test of server.e2e.mjs: n8n's wait tracker looks for due executions
// about once a minute, so the minute passes while the other tests run.
let timedOut;
beforeAll(async () => {
	// A limit of 3 seconds (0.05 minutes)
	timedOut = await publishVariant('d1d1', (ask) => {
		const values = { limitType: 'afterTimeInterval', resumeAmount: 0.05, resumeUnit: 'minutes' };
		ask.options = { limitWaitTime: { values } };
	});
	timedOut.links = emailLinks();
}, 120_000);

test('a wait limit that passes (n8n\'s wait tracker) resumes the node without data: the "no answer" branch runs, nothing is sent again and a later press records nothing', async () => {
	const { workflowId, id, before, links } = timedOut;
	const execution = await ended(workflowId, before, 100_000);
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)[0]).not.toHaveProperty('data');
	expect(nodeOutput(execution, 'Declined or no answer')).toEqual([
		{ nextStep: 'No answer within 2 days: tell jane@customer.test' },
	]);
	// Its links name the execution: an email sent again by the resumed run would name it too.
	const itsEmails = answers.filter(({ summary }) => new RegExp(`/${id}[/?]`).test(summary));
	expect(itsEmails.map(({ path }) => path)).toEqual(['/email/send']);
	const late = await open(links.Refund, 'POST');
	expect(await late.text()).not.toContain(RECORDED);
	expect(await since(workflowId, before)).toHaveLength(1);
}, 150_000);

const choices = (...names) => ({ values: names.map((option) => ({ option })) });
// Every field type: [label, definition, what a person enters or picks, the answer if not that]
const FIELDS = [
	['Refund date', { fieldType: 'date', requiredField: true }, '2031-05-04'],
	['Approved by', { fieldType: 'text', requiredField: true }, 'Ann Finance'],
	['Reason', { fieldType: 'textarea' }, 'Box arrived open'],
	['Copy to', { fieldType: 'email' }, 'ann@example.com'],
	['Amount', { fieldType: 'number', requiredField: true }, '120.5', 120.5],
	['Method', { fieldType: 'dropdown', fieldOptions: choices('Card', 'Voucher') }, 'Voucher'],
	[
		'Items',
		{ fieldType: 'dropdown', multiselect: true, fieldOptions: choices('Box', 'Cable', 'Manual') },
		['Box', 'Manual'],
	],
	[
		'Extras',
		{ fieldType: 'checkbox', fieldOptions: choices('Apology', 'Voucher') },
		['Apology', 'Voucher'],
	],
	['Urgency', { fieldType: 'radio', fieldOptions: choices('Today', 'This week') }, 'This week'],
	['PIN', { fieldType: 'password' }, '2468'],
];

/** What a person does with field `at` of n8n's form page in Chromium. */
async function fillIn(page, at, fieldType, value) {
	if (fieldType === 'dropdown') return await page.selectOption(`#field-${at}`, value);
	if (!['checkbox', 'radio'].includes(fieldType)) return await page.fill(`#field-${at}`, value);
	for (const option of [value].flat())
		await page.check(`input[name="field-${at}"][value="${option}"]`);
}

test("custom form: a person fills every field type in Chromium and submits n8n's page (multipart): the run resumes with the answer keyed by label", async () => {
	const { workflowId, before } = await publishVariant('c0f0', (ask) => {
		ask.responseType = 'customForm';
		delete ask.approvalOptions;
		const hidden = { fieldType: 'hiddenField', fieldName: 'source', fieldValue: 'email' };
		ask.formFields = {
			values: [...FIELDS.map(([fieldLabel, field]) => ({ fieldLabel, ...field })), hidden],
		};
	});
	const { Respond } = emailLinks();
	await scanLinks([Respond]);
	const recorded = await answerInBrowser(Respond, async (page) => {
		for (const [at, [, { fieldType }, value]] of FIELDS.entries())
			await fillIn(page, at, fieldType, value);
	});
	expect(recorded).toContain(RECORDED);
	const execution = await ended(workflowId, before);
	expect(execution.status).toBe('success');
	const answers = FIELDS.map(([label, , value, answer = value]) => [label, answer]);
	expect(nodeOutput(execution, ASK)).toEqual([
		{ data: { ...Object.fromEntries(answers), source: 'email', ...RESPONDED } },
	]);
	expect(emailsSent()).toHaveLength(1);
});

test('the form example (examples/approve-refund-form.json): finance chooses Refund and an amount in the form; "Refund approved" runs with that amount', async () => {
	const { before } = await requestRefund('beExampleRefForm', 'basicsengage-refund-form');
	const recorded = await answerInBrowser(emailLinks().Answer, async (page) => {
		await fillIn(page, 0, 'radio', 'Refund');
		await fillIn(page, 1, 'number', '90');
	});
	expect(recorded).toContain(RECORDED);
	const execution = await ended('beExampleRefForm', before);
	expect(nodeOutput(execution, ASK)).toEqual([
		{ data: { Decision: 'Refund', 'Amount (EUR)': 90, 'Note to the customer': '', ...RESPONDED } },
	]);
	expect(nodeOutput(execution, 'Refund approved')).toEqual([
		{ nextStep: 'Refund 90 EUR for order 1042: put your payment step here' },
	]);
});
