// Retry of a failed execution in a real n8n 2.x, through the REST endpoint the Executions list's
// Retry button calls (POST /rest/executions/:id/retry, with the original or the currently saved
// workflow). A webhook starts ten items into Send Email or Add Profiles (On Error = Stop Workflow);
// the sandbox fails request 6 with a 500. Retry sends 7-10, never again 1-5, and never request 6
// unasked: the retry fails again, saying so.
import { NEWSLETTER_LIST } from '../../dev/n8n-setup.mjs';
import { waitForExecution } from './executions.mjs';
import { env } from './shared.mjs';
import { buildWorkflow, CREDENTIALS, importWorkflow, NODE_TYPE, until } from './helpers.mjs';
import parameters from '../parameters.js';

const { sendParameters } = parameters;

const emailsOf = (indexes) => indexes.map((index) => `contact${index}@customer.test`);
const FIRST_SIX = [0, 1, 2, 3, 4, 5];
const LAST_FOUR = [6, 7, 8, 9];
const CONTACTS = emailsOf([...FIRST_SIX, ...LAST_FOUR]).map((email) => ({ email }));
const pass = { action: 'delay', delayMs: 0 };

/** Webhook -> Split Out (one item per contact) -> the BasicsEngage node; published. */
async function publish(tag, parameters) {
	const path = `basicsengage-retry-${tag}`;
	const workflow = buildWorkflow(`beRetryExec${tag}`, `retry of a failed execution (${tag})`, [
		{
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			parameters: { httpMethod: 'POST', path, options: {} },
		},
		{
			name: 'Split Out',
			type: 'n8n-nodes-base.splitOut',
			parameters: { fieldToSplitOut: 'body.contacts', options: {} },
		},
		{ name: 'Under test', type: NODE_TYPE, credentials: CREDENTIALS, parameters },
	]);
	await importWorkflow(env, workflow);
	return { id: workflow.id, url: `${env.n8n.url}/webhook/${path}` };
}

/** Starts the workflow through its webhook; returns the failed execution. */
async function runFailing({ id, url }) {
	// A freshly published webhook can take a moment to be registered.
	const body = JSON.stringify({ contacts: CONTACTS });
	const start = () =>
		fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
	await until(async () => (await start()).ok, 'the webhook answered no 200', 10_000);
	return await waitForExecution(env.rest, id, { n8nDir: env.n8nDir });
}

/** What the Executions list's Retry does; returns the execution it started, once ended. */
async function retry(workflowId, executionId, loadWorkflow) {
	await env.rest.post(`/rest/executions/${executionId}/retry`, { loadWorkflow });
	return await waitForExecution(env.rest, workflowId, {
		afterId: executionId,
		n8nDir: env.n8nDir,
	});
}

test.each([
	['the original workflow', false],
	['the currently saved workflow', true],
])(
	'Send Email: Retry (%s) after a 500 on email 6 of 10 sends 7-10, never 1-6 again, and fails on 6',
	async (_, loadWorkflow) => {
		const workflow = await publish(
			loadWorkflow ? '0002' : '0001',
			sendParameters({ options: { concurrency: 1 } }),
		);
		env.sandbox.injectFaults([pass, pass, pass, pass, pass, { status: 500 }]);
		const failed = await runFailing(workflow);
		expect(failed.status).toBe('error');
		const requested = () => env.sandbox.requests.map((request) => request.body.to);
		expect(requested()).toEqual(emailsOf(FIRST_SIX));

		const retried = await retry(workflow.id, failed.id, loadWorkflow);
		expect(retried.mode).toBe('retry');
		expect(retried.status).toBe('error');
		expect(requested()).toEqual(emailsOf([...FIRST_SIX, ...LAST_FOUR]));
		expect(env.sandbox.state.emails).toHaveLength(9);
		expect(retried.error.description).toMatch(/Not sent again/);
		expect(retried.error.description).toMatch(
			/Queued in this run \(item indexes\): 0, 1, 2, 3, 4, 6, 7, 8, 9\./,
		);

		// A Retry of the retry sends nothing: every email is known.
		const again = await retry(workflow.id, retried.id, loadWorkflow);
		expect(again.status).toBe('error');
		expect(env.sandbox.requests).toHaveLength(10);
	},
	180_000,
);

test('Add Profiles: Retry after a 500 on batch 6 of 10 adds 6 once more (repeatable), then 7-10; never 1-5 again', async () => {
	const workflow = await publish('0003', {
		resource: 'list',
		operation: 'addProfiles',
		listMode: 'existing',
		listId: NEWSLETTER_LIST.listId,
		email: '={{ $json.email }}',
		options: { batchSize: 1, concurrency: 1, retries: 0 },
	});
	env.sandbox.injectFaults([pass, pass, pass, pass, pass, { status: 500 }]);
	const failed = await runFailing(workflow);
	expect(failed.status).toBe('error');
	const requested = () => env.sandbox.requests.map((request) => request.body.profiles[0].email);
	expect(requested()).toEqual(emailsOf(FIRST_SIX));

	env.sandbox.injectFaults([{ status: 500 }]);
	const first = await retry(workflow.id, failed.id, false);
	expect(first.status).toBe('error');
	expect(requested()).toEqual(emailsOf([...FIRST_SIX, 5]));

	const second = await retry(workflow.id, first.id, false);
	expect(second.status).toBe('error');
	expect(requested()).toEqual(emailsOf([...FIRST_SIX, 5, ...LAST_FOUR]));
	expect(second.error.description).toMatch(/Not sent again/);
}, 180_000);
