// Send and Wait for Response in a real n8n (2.41.1; 1.123.81 under `npm run test:e2e:v1`): the
// refund example (examples/approve-refund.json) started by a real form submission; the links of
// the email the sandbox received are opened as a link scanner and as a person's browser would,
// through n8n's own waiting webhooks and signature check.
import fsp from 'node:fs/promises';
import path from 'node:path';

import {
	activateWorkflow,
	listExecutions,
	nodeOutput,
	readExamples,
	submitForm,
	waitForExecution,
	waitForForm,
} from '../../dev/n8n-setup.mjs';
import { startTestEnvironment } from './helpers.mjs';

const NODE_TYPE = 'n8n-nodes-basicsengage.basicsEngage';
const REFUND = 'beExampleRefund1';
const ASK = 'Ask finance to approve';
const BROWSER =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel; +https://www.barracuda.com)';

let env;

beforeAll(async () => {
	env = await startTestEnvironment();
}, 300_000);

afterAll(async () => {
	await env?.stop();
}, 60_000);

beforeEach(() => env.sandbox.reset());

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

const open = (url, userAgent = BROWSER) => fetch(url, { headers: { 'user-agent': userAgent } });

/**
 * The refund example as its own published workflow and form (path basicsengage-refund-<tag>),
 * with its Send and Wait node changed by `change`; returns the workflow's id.
 * @param {string} tag four hex digits @param {(ask: any) => void} change
 */
async function publishVariant(tag, change) {
	const workflow = structuredClone(readExamples().find((e) => e.id === REFUND).workflow);
	workflow.id = `beExampleRef${tag}`;
	workflow.name = `${workflow.name} (${tag})`;
	const form = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.formTrigger');
	form.webhookId = `${form.webhookId.slice(0, -4)}${tag}`;
	form.parameters.options = { ...form.parameters.options, path: `basicsengage-refund-${tag}` };
	const ask = workflow.nodes.find((n) => n.name === ASK);
	ask.webhookId = `${ask.webhookId.slice(0, -4)}${tag}`;
	change(ask);
	const file = path.join(env.tmp, `${workflow.id}.json`);
	await fsp.writeFile(file, JSON.stringify(workflow));
	expect((await env.n8n.runCli(['import:workflow', `--input=${file}`])).code).toBe(0);
	await activateWorkflow(env.rest, workflow.id);
	await waitForForm(`${env.n8n.url}/form/basicsengage-refund-${tag}`);
	return workflow.id;
}

test('one email with signed Refund and Decline links; a scanner and a changed link answer nothing; the Refund click resumes with approved: true', async () => {
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
	const scanned = await open(links.Decline, SCANNER);
	expect(scanned.status).toBe(200);
	// Decline turned into Refund by hand: n8n's signature check refuses it.
	const forged = new URL(links.Decline);
	forged.searchParams.set('approved', 'true');
	expect((await open(forged.toString())).status).toBe(401);
	expect((await listExecutions(env.rest, REFUND)).find((e) => e.id === id).status).toBe('waiting');

	const clicked = await open(links.Refund);
	expect(clicked.status).toBe(200);
	expect(await clicked.text()).toContain('Your response has been recorded');
	const execution = await waitForExecution(env.rest, REFUND, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(execution.status).toBe('success');
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: true } }]);
	expect(nodeOutput(execution, 'Refund approved')).toEqual([
		{ nextStep: 'Refund order 1042: put your payment step here' },
	]);
	// The resume ran the webhook, not the send.
	expect(requestsTo('/email/send')).toHaveLength(1);
});

test('the Decline click resumes with approved: false', async () => {
	const { before } = await requestRefund();
	expect(await (await open(emailLinks().Decline)).text()).toContain('recorded');
	const execution = await waitForExecution(env.rest, REFUND, {
		afterId: before,
		n8nDir: env.n8nDir,
	});
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { approved: false } }]);
	expect(nodeOutput(execution, 'Declined or no answer')).toEqual([
		{ nextStep: 'Declined: tell jane@customer.test' },
	]);
});

test('n8n 2.x derives the human-review tool (basicsEngageHitlTool) from the node; 1.x has none', async () => {
	const nodes = await (
		await fetch(`${env.n8n.url}/types/nodes.json`, { headers: { cookie: env.cookie } })
	).json();
	const names = nodes.map((n) => n.name);
	const v1 = process.env.N8N_DEV_RUNTIME === 'v1';
	expect(names.includes(`${NODE_TYPE}HitlTool`)).toBe(!v1);
});

test('free text: the Respond link opens a form page; the form, posted as a browser posts it, resumes with the text', async () => {
	const FREE_TEXT = await publishVariant('f7f7', (ask) => {
		ask.parameters.responseType = 'freeText';
		delete ask.parameters.approvalOptions;
	});
	const { before } = await requestRefund(FREE_TEXT, 'basicsengage-refund-f7f7');
	const { Respond } = emailLinks();
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
	expect(nodeOutput(execution, ASK)).toEqual([{ data: { text: 'Only half: the box was opened' } }]);
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
