// Send and Wait for Response in a real n8n (2.41.1; 1.123.81 under `npm run test:e2e:v1`): the
// refund examples (examples/approve-refund.json, approve-refund-form.json) started by a real form
// submission; the links of the email the sandbox received are opened as a link scanner does (GET
// and HEAD, with any User-Agent) and by a person in Chromium (open, then press the page's button
// or fill in its form), through n8n's own waiting webhooks and signature check.
import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

import {
	getExecution,
	listExecutions,
	nodeOutput,
	SANDBOX_CREDENTIAL,
	submitForm,
	waitForExecution,
	waitForForm,
} from '../../dev/n8n-setup.mjs';
import { env } from './shared.mjs';
import { exampleVariant, importWorkflow, launchBrowser, NODE_TYPE } from './helpers.mjs';

const REFUND = 'beExampleRefund1';
const REFUND_FORM = 'beExampleRefForm';
const ASK = 'Ask finance to approve';
const BROWSER =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel; +https://www.barracuda.com)';
const RECORDED = 'Your response has been recorded';

let browser;

beforeAll(async () => {
	browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
	await browser?.close();
}, 60_000);

const requestsTo = (p) => env.sandbox.requests.filter((r) => r.path === p);

/** Submits a refund form; returns the id of the execution once it waits for the answer. */
async function requestRefund(workflowId = REFUND, formPath = 'basicsengage-refund') {
	const before = (await listExecutions(env.rest, workflowId))[0]?.id ?? 0;
	const res = await submitForm(`${env.n8n.url}/form/${formPath}`, [
		'1042',
		'120',
		'jane@customer.test',
	]);
	expect(res.status).toBe(200);
	const deadline = Date.now() + 30_000;
	for (;;) {
		const waiting = (await listExecutions(env.rest, workflowId)).find(
			(e) => Number(e.id) > Number(before) && e.status === 'waiting',
		);
		if (waiting) return { id: waiting.id, before };
		if (Date.now() > deadline) throw new Error('the refund execution never waited');
		await new Promise((r) => setTimeout(r, 300));
	}
}

/** The email's links by label, as a mail program reads them. */
function emailLinks() {
	const [email] = requestsTo('/email/send');
	return Object.fromEntries(
		[...email.body.html.matchAll(/<a href="([^"]+)"[^>]*>([^<]*)<\/a>/g)].map(([, href, label]) => [
			label,
			href.replaceAll('&amp;', '&'),
		]),
	);
}

const open = (url, userAgent = BROWSER, method = 'GET') =>
	fetch(url, { method, headers: { 'user-agent': userAgent } });

/**
 * What a mail gateway or link scanner does: opens every link, GET and HEAD, as itself and posing
 * as a browser, and presses nothing. Each answer must be a page, never an error.
 */
async function scanLinks(urls) {
	for (const url of urls) {
		for (const userAgent of [SCANNER, BROWSER]) {
			for (const method of ['HEAD', 'GET']) {
				const res = await open(url, userAgent, method);
				expect([method, res.status]).toEqual([method, 200]);
				expect(await res.text()).not.toContain(RECORDED);
			}
		}
	}
}

/**
 * What a person does: opens the link in a browser, reads the page, presses its one button.
 * Returns the page the press leads to.
 */
async function openAndPress(url, label) {
	const page = await browser.context.newPage();
	try {
		await page.goto(url);
		const button = page.locator('button');
		expect(await button.count()).toBe(1);
		expect((await button.textContent()).trim()).toBe(label);
		const [posted] = await Promise.all([
			page.waitForResponse((res) => res.request().method() === 'POST'),
			button.click(),
		]);
		await page.waitForLoadState();
		return { status: posted.status(), text: await page.textContent('body') };
	} finally {
		await page.close();
	}
}

const RESPONDED = { respondedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) };

/**
 * The refund example as its own published workflow and form (path basicsengage-refund-<tag>),
 * with its Send and Wait node changed by `change`; returns the workflow's id.
 * @param {string} tag four hex digits @param {(ask: any) => void} change
 */
async function publishVariant(tag, change) {
	const triggerPath = `basicsengage-refund-${tag}`;
	const { workflow, node } = exampleVariant(REFUND, {
		id: `beExampleRef${tag}`,
		label: tag,
		triggerPath,
	});
	change(node(ASK));
	await importWorkflow(env, workflow);
	await waitForForm(`${env.n8n.url}/form/${triggerPath}`);
	return workflow.id;
}

test('one email with signed Refund and Decline links; a scanner opening them (GET, HEAD, any User-Agent) and a changed link answer nothing; a person opens Refund and presses its button: the run resumes once with approved: true', async () => {
	const { id, before } = await requestRefund();
	expect(requestsTo('/email/send').map((r) => r.body.subject)).toEqual([
		'Refund 120 EUR for order 1042?',
	]);
	const links = emailLinks();
	expect(Object.keys(links)).toEqual(['Decline', 'Refund']);
	const refund = new URL(links.Refund);
	expect(refund.pathname).toMatch(new RegExp(`/webhook-waiting/${id}/[^/]+$`));
	expect(refund.searchParams.get('signature')).toMatch(/\S/);

	// A link scanner opens every link: nothing is answered.
	await scanLinks(Object.values(links));
	const page = await (await open(links.Refund)).text();
	expect(page).toContain('Refund 120 EUR for order 1042?');
	expect(page).toContain('<form method="post">');
	// Decline turned into Refund by hand: n8n's signature check refuses it, opened or pressed.
	const forged = new URL(links.Decline);
	forged.searchParams.set('approved', 'true');
	expect((await open(forged.toString())).status).toBe(401);
	expect((await open(forged.toString(), BROWSER, 'POST')).status).toBe(401);
	expect((await listExecutions(env.rest, REFUND)).find((e) => e.id === id).status).toBe('waiting');

	const pressed = await openAndPress(links.Refund, 'Refund');
	expect(pressed).toMatchObject({ status: 200, text: expect.stringContaining(RECORDED) });
	const execution = await waitForExecution(env.rest, REFUND, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: true, ...RESPONDED } }]);
	expect(nodeOutput(execution, 'Refund approved')).toEqual([
		{ nextStep: 'Refund order 1042: put your payment step here' },
	]);
	// Once: a second press, or the other button, resumes nothing more.
	for (const url of [links.Refund, links.Decline]) {
		expect(await (await open(url, BROWSER, 'POST')).text()).not.toContain(RECORDED);
	}
	expect(
		(await listExecutions(env.rest, REFUND)).filter((e) => Number(e.id) > Number(before)),
	).toHaveLength(1);
	expect((await getExecution(env.rest, id, { n8nDir: env.n8nDir })).runData[ASK]).toHaveLength(1);
	// The resume ran the webhook, not the send.
	expect(requestsTo('/email/send')).toHaveLength(1);
});

test('the Decline press resumes with approved: false', async () => {
	const { before } = await requestRefund();
	expect((await openAndPress(emailLinks().Decline, 'Decline')).text).toContain(RECORDED);
	const execution = await waitForExecution(env.rest, REFUND, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: false, ...RESPONDED } }]);
	expect(nodeOutput(execution, 'Declined or no answer')).toEqual([
		{ nextStep: 'Declined: tell jane@customer.test' },
	]);
});

test('n8n 2.x derives the human-review tool (basicsEngageHitlTool) from the node, its Response Type fixed to Approval (Custom Form stays out of it); 1.x has none', async () => {
	const nodes = await (
		await fetch(`${env.n8n.url}/types/nodes.json`, { headers: { cookie: env.cookie } })
	).json();
	const hitl = nodes.find((n) => n.name === `${NODE_TYPE}HitlTool`);
	const v1 = process.env.N8N_DEV_RUNTIME === 'v1';
	expect(hitl === undefined).toBe(v1);
	if (!v1) {
		expect(hitl.properties.filter((p) => p.name === 'responseType')).toEqual([
			expect.objectContaining({ type: 'hidden', default: 'approval' }),
		]);
	}
});

/**
 * A chat model on loopback speaking OpenAI's chat completions API: it calls the first tool it is
 * offered (arguments that fit its schema), and once a tool has answered, it says "Done.".
 */
async function startFakeModel() {
	const fill = (schema) => {
		if (schema?.type === 'object') {
			const properties = Object.entries(schema.properties ?? {});
			return Object.fromEntries(properties.map(([name, value]) => [name, fill(value)]));
		}
		return { number: 1, integer: 1, boolean: true }[schema?.type] ?? 'yes';
	};
	const calls = [];
	const server = http.createServer(async (req, res) => {
		let raw = '';
		for await (const chunk of req) raw += chunk;
		const body = JSON.parse(raw || '{}');
		calls.push(body);
		const tool = body.tools?.[0]?.function;
		const message =
			body.messages?.at(-1)?.role === 'tool' || !tool
				? { role: 'assistant', content: 'Done.' }
				: {
						role: 'assistant',
						content: null,
						tool_calls: [
							{
								id: `call_${calls.length}`,
								type: 'function',
								function: { name: tool.name, arguments: JSON.stringify(fill(tool.parameters)) },
							},
						],
					};
		res.setHeader('content-type', 'application/json');
		res.end(
			JSON.stringify({
				id: `chatcmpl-${calls.length}`,
				object: 'chat.completion',
				created: Math.floor(Date.now() / 1000),
				model: body.model,
				choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
				usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
			}),
		);
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}/v1`,
		calls,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

/** The agent's workflow: Webhook > AI Agent, whose one tool (Send Email) a person must approve. */
function agentGateWorkflow() {
	const { id, name } = SANDBOX_CREDENTIAL;
	const credentials = { basicsEngageApi: { id, name } };
	const email = { from: 'hello@example.com', resource: 'email' };
	const node = (name, type, typeVersion, parameters, extra = {}) => ({
		id: randomUUID(),
		name,
		type,
		typeVersion,
		position: [0, 0],
		parameters,
		...extra,
	});
	const into = (target, type) => ({ [type]: [[{ node: target, type, index: 0 }]] });
	return {
		id: 'beE2eAgentGate01',
		name: "BasicsEngage e2e: a person approves the agent's email",
		nodes: [
			node(
				'Start',
				'n8n-nodes-base.webhook',
				2,
				{ path: 'basicsengage-agent-gate' },
				{ webhookId: randomUUID() },
			),
			node('AI Agent', '@n8n/n8n-nodes-langchain.agent', 3.1, {
				promptType: 'define',
				text: 'Send Jane the welcome email.',
				options: { enableStreaming: false },
			}),
			node(
				'Model',
				'@n8n/n8n-nodes-langchain.lmChatOpenAi',
				1.2,
				{ model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
				{ credentials: { openAiApi: { id: 'beE2eFakeModel01', name: 'Fake model (e2e)' } } },
			),
			node(
				'Ask finance',
				`${NODE_TYPE}HitlTool`,
				1,
				{
					...email,
					operation: 'sendAndWait',
					to: 'finance@customer.test',
					subject: 'May the agent send an email?',
				},
				{ webhookId: randomUUID(), credentials },
			),
			node(
				'Send Welcome',
				`${NODE_TYPE}Tool`,
				1,
				{
					...email,
					operation: 'send',
					to: 'jane@customer.test',
					subject: 'Welcome',
					content: 'text',
					text: 'Hello!',
				},
				{ credentials },
			),
		],
		connections: {
			Start: into('AI Agent', 'main'),
			Model: into('AI Agent', 'ai_languageModel'),
			'Ask finance': into('AI Agent', 'ai_tool'),
			'Send Welcome': into('Ask finance', 'ai_tool'),
		},
		settings: { executionOrder: 'v1' },
	};
}

(process.env.N8N_DEV_RUNTIME === 'v1' ? test.skip : test)(
	"n8n 2.x: the AI Agent's gated tool (Send Email) waits for the human-review email; a scanner opening its link changes nothing; a person's press runs the tool once",
	async () => {
		const model = await startFakeModel();
		try {
			const credentials = path.join(env.tmp, 'fake-model-credential.json');
			await fsp.writeFile(
				credentials,
				JSON.stringify([
					{
						id: 'beE2eFakeModel01',
						name: 'Fake model (e2e)',
						type: 'openAiApi',
						data: { apiKey: 'sk-e2e-fake', url: model.url },
					},
				]),
			);
			expect((await env.n8n.runCli(['import:credentials', `--input=${credentials}`])).code).toBe(0);
			const workflow = agentGateWorkflow();
			await importWorkflow(env, workflow);

			// One call starts one run: n8n answers 404 until it has registered the webhook.
			const deadline = Date.now() + 30_000;
			while ((await fetch(`${env.n8n.url}/webhook/basicsengage-agent-gate`)).status !== 200) {
				if (Date.now() > deadline) throw new Error('the agent webhook never answered');
				await new Promise((r) => setTimeout(r, 300));
			}
			while ((await listExecutions(env.rest, workflow.id))[0]?.status !== 'waiting') {
				if (Date.now() > deadline + 30_000) throw new Error('the agent run never waited');
				await new Promise((r) => setTimeout(r, 300));
			}
			expect(model.calls[0].tools.map((t) => t.function.name)).toHaveLength(1);
			expect(requestsTo('/email/send').map((r) => [r.body.to, r.body.subject])).toEqual([
				['finance@customer.test', 'May the agent send an email?'],
			]);
			const { Approve } = emailLinks();

			await scanLinks([Approve]);
			expect((await listExecutions(env.rest, workflow.id))[0].status).toBe('waiting');
			expect(requestsTo('/email/send')).toHaveLength(1);

			expect((await openAndPress(Approve, 'Approve')).text).toContain(RECORDED);
			const execution = await waitForExecution(env.rest, workflow.id, { n8nDir: env.n8nDir });
			expect(execution.status).toBe('success');
			expect(nodeOutput(execution, 'AI Agent')).toEqual([{ output: 'Done.' }]);
			expect(requestsTo('/email/send').map((r) => [r.body.to, r.body.subject])).toEqual([
				['finance@customer.test', 'May the agent send an email?'],
				['jane@customer.test', 'Welcome'],
			]);
			expect(await listExecutions(env.rest, workflow.id)).toHaveLength(1);
		} finally {
			await model.close();
		}
	},
);

test('free text: the Respond link opens a form page; the form, posted as a browser posts it, resumes with the text', async () => {
	const FREE_TEXT = await publishVariant('f7f7', (ask) => {
		ask.parameters.responseType = 'freeText';
		delete ask.parameters.approvalOptions;
	});
	const { before } = await requestRefund(FREE_TEXT, 'basicsengage-refund-f7f7');
	const { Respond } = emailLinks();
	await scanLinks([Respond]);
	const page = await open(Respond);
	expect(page.status).toBe(200);
	expect(await page.text()).toContain('<form method="post">');

	// What a browser sends for the form: to the page's own URL, urlencoded.
	const posted = await fetch(Respond, {
		method: 'POST',
		headers: { 'user-agent': BROWSER, 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams({ text: 'Only half: the box was opened' }).toString(),
	});
	expect(await posted.text()).toContain('Your response has been recorded');
	const execution = await waitForExecution(env.rest, FREE_TEXT, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(nodeOutput(execution, ASK)).toEqual([
		{ data: { text: 'Only half: the box was opened', ...RESPONDED } },
	]);
	expect(requestsTo('/email/send')).toHaveLength(1);
});

test('a wait limit that passes resumes the node without data: the "no answer" branch runs and nothing is sent again', async () => {
	// 3 seconds; n8n's wait tracker looks for due executions about once a minute.
	const LIMITED = await publishVariant('d1d1', (ask) => {
		ask.parameters.options = {
			limitWaitTime: {
				values: { limitType: 'afterTimeInterval', resumeAmount: 0.05, resumeUnit: 'minutes' },
			},
		};
	});
	const { before } = await requestRefund(LIMITED, 'basicsengage-refund-d1d1');
	const execution = await waitForExecution(env.rest, LIMITED, {
		afterId: before,
		n8nDir: env.n8nDir,
		timeoutMs: 100_000,
	});
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)[0]).not.toHaveProperty('data');
	expect(nodeOutput(execution, 'Declined or no answer')).toEqual([
		{ nextStep: 'No answer within 2 days: tell jane@customer.test' },
	]);
	expect(requestsTo('/email/send')).toHaveLength(1);
}, 150_000);

const choices = (...names) => ({ values: names.map((option) => ({ option })) });

/** What a person does with a form: opens the link in Chromium, fills it in, submits it. */
async function fillAndSubmit(url, fill) {
	const page = await browser.context.newPage();
	try {
		await page.goto(url);
		await fill(page);
		const [posted] = await Promise.all([
			page.waitForResponse((res) => res.request().method() === 'POST'),
			page.locator('button').click(),
		]);
		await page.waitForLoadState();
		return {
			status: posted.status(),
			title: await page.title(),
			text: await page.textContent('body'),
		};
	} finally {
		await page.close();
	}
}

/** A custom form's post as a script sends it: multipart/form-data, as n8n 2.x requires. */
function postForm(url, fields) {
	const body = new FormData();
	for (const [name, value] of Object.entries(fields)) body.append(name, value);
	return fetch(url, { method: 'POST', headers: { 'user-agent': BROWSER }, body });
}

test('custom form: a scanner opening the link and a bad post record nothing; a person fills every field type in Chromium and submits: the run resumes once with the answer keyed by label', async () => {
	const FORM = await publishVariant('c0f0', (ask) => {
		ask.parameters.responseType = 'customForm';
		delete ask.parameters.approvalOptions;
		ask.parameters.formFields = {
			values: [
				{ fieldLabel: 'Refund date', fieldType: 'date', requiredField: true },
				{ fieldLabel: 'Approved by', fieldType: 'text', requiredField: true },
				{ fieldLabel: 'Reason', fieldType: 'textarea' },
				{ fieldLabel: 'Copy to', fieldType: 'email' },
				{ fieldLabel: 'Amount', fieldType: 'number', requiredField: true },
				{ fieldLabel: 'Method', fieldType: 'dropdown', fieldOptions: choices('Card', 'Voucher') },
				{
					fieldLabel: 'Items',
					fieldType: 'dropdown',
					multiselect: true,
					fieldOptions: choices('Box', 'Cable', 'Manual'),
				},
				{
					fieldLabel: 'Extras',
					fieldType: 'checkbox',
					fieldOptions: choices('Apology', 'Voucher'),
				},
				{ fieldLabel: 'Urgency', fieldType: 'radio', fieldOptions: choices('Today', 'This week') },
				{ fieldLabel: 'PIN', fieldType: 'password' },
				{ fieldType: 'hiddenField', fieldName: 'source', fieldValue: 'email' },
			],
		};
		// The example's Limit Wait Time (2 days) stays.
		ask.parameters.options = {
			...ask.parameters.options,
			messageButtonLabel: 'Answer',
			responseFormTitle: 'Refund <details>',
		};
	});
	const { id, before } = await requestRefund(FORM, 'basicsengage-refund-c0f0');
	const { Answer } = emailLinks();
	await scanLinks([Answer]);
	const form = await (await open(Answer)).text();
	expect(form).toContain('<title>Refund &lt;details&gt;</title>');

	// A post with an amount that is no number: refused, the run waits on.
	const bad = await postForm(Answer, {
		'field-0': '2031-05-04',
		'field-1': 'Ann',
		'field-4': 'lots',
	});
	expect(await bad.text()).toContain('Amount: enter a number');
	expect((await listExecutions(env.rest, FORM)).find((e) => e.id === id).status).toBe('waiting');

	const recorded = await fillAndSubmit(Answer, async (page) => {
		await page.fill('#field-0', '2031-05-04');
		await page.fill('#field-1', 'Ann Finance');
		await page.fill('#field-2', 'Box arrived open');
		await page.fill('#field-3', 'ann@example.com');
		await page.fill('#field-4', '120.5');
		await page.selectOption('#field-5', 'Voucher');
		await page.selectOption('#field-6', ['Box', 'Manual']);
		await page.check('input[name="field-7"][value="Apology"]');
		await page.check('input[name="field-7"][value="Voucher"]');
		await page.check('input[name="field-8"][value="This week"]');
		await page.fill('#field-9', '2468');
	});
	expect(recorded).toMatchObject({ status: 200, text: expect.stringContaining(RECORDED) });
	const execution = await waitForExecution(env.rest, FORM, { afterId: before, n8nDir: env.n8nDir });
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)).toEqual([
		{
			data: {
				'Refund date': '2031-05-04',
				'Approved by': 'Ann Finance',
				Reason: 'Box arrived open',
				'Copy to': 'ann@example.com',
				Amount: 120.5,
				Method: 'Voucher',
				Items: ['Box', 'Manual'],
				Extras: ['Apology', 'Voucher'],
				Urgency: 'This week',
				PIN: '2468',
				source: 'email',
				...RESPONDED,
			},
		},
	]);
	// Once: the same form posted again records nothing more.
	const again = await postForm(Answer, {
		'field-0': '2031-05-04',
		'field-1': 'Ann',
		'field-4': '1',
	});
	expect(await again.text()).not.toContain(RECORDED);
	expect(
		(await listExecutions(env.rest, FORM)).filter((e) => Number(e.id) > Number(before)),
	).toHaveLength(1);
	expect(requestsTo('/email/send')).toHaveLength(1);
});

test('the form example (examples/approve-refund-form.json): finance chooses Refund and an amount in the form; "Refund approved" runs with that amount', async () => {
	const { before } = await requestRefund(REFUND_FORM, 'basicsengage-refund-form');
	const { Answer } = emailLinks();
	expect((await (await open(Answer)).text()).includes('<title>Refund for order 1042</title>')).toBe(
		true,
	);
	const recorded = await fillAndSubmit(Answer, async (page) => {
		await page.check('input[name="field-0"][value="Refund"]');
		await page.fill('#field-1', '90');
	});
	expect(recorded.text).toContain(RECORDED);
	const execution = await waitForExecution(env.rest, REFUND_FORM, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(nodeOutput(execution, ASK)).toEqual([
		{ data: { Decision: 'Refund', 'Amount (EUR)': 90, 'Note to the customer': '', ...RESPONDED } },
	]);
	expect(nodeOutput(execution, 'Refund approved')).toEqual([
		{ nextStep: 'Refund 90 EUR for order 1042: put your payment step here' },
	]);
});
