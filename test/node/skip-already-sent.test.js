// @ts-check
'use strict';

/**
 * Send Email's option "Skip Emails Already Sent": a key per email in n8n's deduplication store
 * (checkProcessedAndRecord / removeProcessed, the store of the Remove Duplicates node). The
 * server keeps it in its database; the harness keeps the same "entries" semantics in memory.
 * Runs share the store when they are the same saved workflow (workflowId) and node (node id).
 */

const { randomUUID } = require('node:crypto');
const {
	contacts,
	expectEachInputExactlyOnce,
	runNode,
	sendParameters,
	startSandbox,
} = require('../support');

/** @type {Awaited<ReturnType<typeof startSandbox>>} */
let sandbox;
beforeAll(async () => {
	sandbox = await startSandbox({ dailyLimit: 1000 });
});
afterEach(() => sandbox.reset());
afterAll(() => sandbox.close());

/** One saved workflow with one node, run again and again. */
function savedWorkflow() {
	return { workflowId: `wf-${randomUUID()}`, nodeOverrides: { id: randomUUID() } };
}

/** @param {Record<string, unknown>} settings @param {Record<string, unknown>} [options] */
const skipping = (settings = {}, options = {}) =>
	sendParameters({ options: { ...options, skipAlreadySent: { settings } } });

const recipients = () => sandbox.requests.map((request) => request.body.to);

test('off by default: the same email in two runs is sent twice', async () => {
	const workflow = savedWorkflow();
	await runNode(sandbox, { ...workflow, parameters: sendParameters(), items: contacts(1) });
	await runNode(sandbox, { ...workflow, parameters: sendParameters(), items: contacts(1) });
	expect(sandbox.state.emails).toHaveLength(2);
});

test('on: an email sent by an earlier execution is skipped, marked skipped, paired, costing no quota', async () => {
	const workflow = savedWorkflow();
	const first = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(2) });
	expect(first.success.map((item) => item.json.messageId)).toEqual([
		expect.any(String),
		expect.any(String),
	]);
	const second = await runNode(sandbox, {
		...workflow,
		parameters: skipping(),
		items: contacts(3),
	});
	expect(recipients()).toEqual([
		'contact0@customer.test',
		'contact1@customer.test',
		'contact2@customer.test',
	]);
	expect(second.success.map((item) => item.json.skipped ?? false)).toEqual([true, true, false]);
	expect(second.success[0].json.reason).toMatch(/sent before/);
	expectEachInputExactlyOnce(second, 3);
	expect(sandbox.state.quota.get('be_sandbox_demo_key')?.count).toBe(3);
});

test('on: the same key twice in one run sends the first and skips the second, naming it', async () => {
	const result = await runNode(sandbox, {
		...savedWorkflow(),
		parameters: skipping(),
		items: [...contacts(1), ...contacts(1)],
	});
	expect(recipients()).toEqual(['contact0@customer.test']);
	expect(result.success[1].json).toEqual({
		skipped: true,
		reason: expect.stringMatching(/item 0 of this run/),
	});
});

test('the default key is the recipient (any case) and the subject; another subject is another email', async () => {
	const workflow = savedWorkflow();
	await runNode(sandbox, {
		...workflow,
		parameters: skipping(),
		items: [{ email: 'Jane@Customer.test' }],
	});
	const again = await runNode(sandbox, {
		...workflow,
		parameters: skipping(),
		items: [{ email: 'jane@customer.test' }],
	});
	const otherSubject = await runNode(sandbox, {
		...workflow,
		parameters: { ...skipping(), subject: 'Your receipt' },
		items: [{ email: 'jane@customer.test' }],
	});
	expect(again.success[0].json.skipped).toBe(true);
	expect(otherSubject.success[0].json.messageId).toEqual(expect.any(String));
});

test('a Key expression (an order id) decides instead of recipient and subject', async () => {
	const workflow = savedWorkflow();
	const parameters = skipping({ key: '={{ $json.orderId }}' });
	await runNode(sandbox, {
		...workflow,
		parameters,
		items: [{ email: 'a@customer.test', orderId: 'o-1' }],
	});
	const result = await runNode(sandbox, {
		...workflow,
		parameters,
		items: [
			{ email: 'b@customer.test', orderId: 'o-1' },
			{ email: 'a@customer.test', orderId: 'o-2' },
		],
	});
	expect(result.success.map((item) => item.json.skipped ?? false)).toEqual([true, false]);
	expect(recipients()).toEqual(['a@customer.test', 'a@customer.test']);
});

test('scope: "This Node" is per node, "This Workflow" is shared by the nodes of the workflow', async () => {
	for (const [scope, skippedByOtherNode] of /** @type {const} */ ([
		['node', false],
		['workflow', true],
	])) {
		const workflowId = `wf-${randomUUID()}`;
		const parameters = skipping({ scope });
		await runNode(sandbox, {
			workflowId,
			nodeOverrides: { id: randomUUID() },
			parameters,
			items: contacts(1),
		});
		const other = await runNode(sandbox, {
			workflowId,
			nodeOverrides: { id: randomUUID() },
			parameters,
			items: contacts(1),
		});
		expect(other.success[0].json.skipped === true).toBe(skippedByOtherNode);
	}
});

test.each([
	['a 400 (refused)', { status: 400 }, true],
	['a 429 (refused)', { status: 429 }, true],
	['a 500 (may have been queued)', { status: 500 }, false],
	['a dropped answer (queued, answer lost)', { action: 'drop' }, false],
])('after %s, a later run sends the email again: %s', async (_, fault, sentAgain) => {
	const workflow = savedWorkflow();
	sandbox.injectFaults([/** @type {any} */ (fault)]);
	await runNode(sandbox, {
		...workflow,
		parameters: skipping(),
		items: contacts(1),
		onError: 'continueErrorOutput',
	});
	const later = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(1) });
	// Released when nothing was queued, so a later run sends; kept when it may have been.
	expect(later.success[0].json.skipped === undefined).toBe(sentAgain);
	expect(sandbox.requests).toHaveLength(sentAgain ? 2 : 1);
});

test('On Error = Stop: emails not sent because the run stopped are released too', async () => {
	const workflow = savedWorkflow();
	sandbox.injectFaults([{ status: 401 }]);
	const failed = await runNode(sandbox, {
		...workflow,
		parameters: skipping({}, { concurrency: 1 }),
		items: contacts(3),
	});
	expect(failed.error).toBeDefined();
	const later = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(3) });
	expect(later.success.map((item) => item.json.skipped ?? false)).toEqual([false, false, false]);
});

test('History Size keeps the newest keys only', async () => {
	const workflow = savedWorkflow();
	const parameters = skipping({ historySize: 1 });
	await runNode(sandbox, { ...workflow, parameters, items: contacts(2) });
	const later = await runNode(sandbox, { ...workflow, parameters, items: contacts(2) });
	expect(later.success.map((item) => item.json.skipped ?? false)).toEqual([false, true]);
});

test('under Retry On Fail, what try 1 sent is answered again, not reported as skipped', async () => {
	sandbox.injectFaults([{ status: 500 }]);
	const result = await runNode(sandbox, {
		...savedWorkflow(),
		parameters: skipping(),
		items: contacts(3),
		onError: 'continueRegularOutput',
		retryOnFail: true,
		maxTries: 2,
		waitBetweenTries: 1,
	});
	expect(sandbox.requests).toHaveLength(3);
	expect(result.success.map((item) => Object.keys(item.json).sort())).toEqual([
		['details', 'error'],
		[
			'dailyEmailCount',
			'dailyEmailLimit',
			'dailyEmailsRemaining',
			'message',
			'messageId',
			'status',
		],
		[
			'dailyEmailCount',
			'dailyEmailLimit',
			'dailyEmailsRemaining',
			'message',
			'messageId',
			'status',
		],
	]);
});

test('as an AI tool, a repeated call of another execution is skipped', async () => {
	const workflow = savedWorkflow();
	const parameters = sendParameters({
		to: "={{ $fromAI('to', 'recipient', 'string') }}",
		options: { skipAlreadySent: { settings: {} } },
	});
	await runNode(sandbox, { ...workflow, parameters, toolCalls: [{ to: 'jane@customer.test' }] });
	const again = await runNode(sandbox, {
		...workflow,
		parameters,
		toolCalls: [{ to: 'jane@customer.test' }],
	});
	expect(JSON.parse(again.toolAnswers[0].answer)).toEqual([
		{ skipped: true, reason: expect.stringMatching(/sent before/) },
	]);
	expect(sandbox.requests).toHaveLength(1);
});
