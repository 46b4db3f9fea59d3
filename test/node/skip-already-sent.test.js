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
	deduplicationStore,
	expectEachInputExactlyOnce,
	restartN8n,
	runNode,
	savedWorkflow,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ dailyLimit: 1000 });

/** @param {Record<string, unknown>} settings @param {Record<string, unknown>} [options] */
const skipping = (settings = {}, options = {}) =>
	sendParameters({ options: { ...options, skipAlreadySent: { settings } } });

const recipients = () => sandbox.requests.map((request) => request.body.to);

/** A saved workflow whose first run sent contact 0 and lost the answer: its outcome is unknown. */
async function withUnknownOutcome() {
	const workflow = savedWorkflow();
	sandbox.injectFaults([{ action: 'drop' }]);
	await runNode(sandbox, {
		...workflow,
		parameters: skipping({}, { retries: 0 }),
		items: contacts(1),
		onError: 'continueErrorOutput',
	});
	return workflow;
}

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

const RESET = (/** @type {number} */ link) => ({ text: `Reset: https://x.test/r/${link}` });
const ORDER = (/** @type {number} */ number) => ({
	content: 'template',
	templateId: 'tmpl_welcome',
	templateVariablesMode: 'json',
	templateVariablesJson: `{ "company": "Order ${number}" }`,
});

test.each([
	[
		'the same email, the recipient in another case, is skipped',
		RESET(1),
		RESET(1),
		'JANE@customer.test',
		true,
	],
	['another subject is another email, sent', RESET(1), { ...RESET(1), subject: 'Your receipt' }],
	['another body (a new reset link, same subject) is another email, sent', RESET(1), RESET(2)],
	['another sender is another email, sent', RESET(1), { ...RESET(1), from: 'noreply@example.com' }],
	[
		'the same template with other variables (a second order confirmation) is another email, sent',
		ORDER(1001),
		ORDER(1002),
	],
])(
	'the default key is the whole email: %s',
	async (_, first, second, to = 'jane@customer.test', skipped = false) => {
		const workflow = savedWorkflow();
		const run = (/** @type {Record<string, unknown>} */ email, /** @type {string} */ address) =>
			runNode(sandbox, {
				...workflow,
				parameters: { ...skipping(), ...email },
				items: [{ email: address }],
			});
		await run(first, 'jane@customer.test');
		const again = await run(second, to);
		expect(again.success[0].json.skipped ?? false).toBe(skipped);
		expect(sandbox.state.emails).toHaveLength(skipped ? 1 : 2);
	},
);

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
	['a 400 (refused)', { status: 400 }],
	['a 429 (refused)', { status: 429 }],
	['the API\'s 500 "Internal server error; retry later"', { status: 500 }],
	[
		"a proxy's 503 page",
		{
			status: 503,
			body: '<html>Service Unavailable</html>',
			headers: { 'content-type': 'text/html' },
		},
	],
	['a 502 from a gateway', { status: 502 }],
])('after %s nothing was queued, so a later run sends the email', async (_, fault) => {
	const workflow = savedWorkflow();
	sandbox.injectFaults([/** @type {any} */ (fault)]);
	await runNode(sandbox, {
		...workflow,
		parameters: skipping(),
		items: contacts(1),
		onError: 'continueErrorOutput',
	});
	const later = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(1) });
	expect(later.success[0].json.messageId).toEqual(expect.any(String));
	expect(sandbox.requests).toHaveLength(2);
	expect(sandbox.state.emails).toHaveLength(1);
});

test.each([
	['a dropped answer (queued, answer lost)', { action: 'drop' }],
	['a timeout after the request left', { action: 'hang' }],
	['a 504 from a gateway', { status: 504 }],
])(
	'after %s the outcome is unknown: a later run fails the item saying so, never "sent before"',
	async (_, fault) => {
		const workflow = savedWorkflow();
		const parameters = skipping({}, { retries: 0 });
		sandbox.injectFaults([/** @type {any} */ (fault)]);
		await runNode(sandbox, {
			...workflow,
			parameters: { ...parameters, requestOptions: { timeout: 300 } },
			items: contacts(2),
			onError: 'continueErrorOutput',
		});
		const later = await runNode(sandbox, {
			...workflow,
			parameters,
			items: contacts(2),
			onError: 'continueErrorOutput',
		});
		expect(later.errors).toHaveLength(1);
		expect(later.errors[0].json).toMatchObject({
			error: expect.stringMatching(/no clear answer/),
			details: {
				kind: 'outcome_unknown',
				description: expect.stringMatching(/Retry Send On Server Error/),
			},
		});
		expect(later.errors[0].pairedItem).toEqual({ item: 0 });
		expect(later.success[0].json.skipped).toBe(true);
		expect(JSON.stringify(later.success)).not.toMatch(/no clear answer/);
		expect(sandbox.requests).toHaveLength(2);
	},
);

test('an unknown outcome is sent again only when Retry Send On Server Error allows it, then remembered', async () => {
	const workflow = await withUnknownOutcome();
	const allowed = await runNode(sandbox, {
		...workflow,
		parameters: skipping({}, { retrySendOnServerError: true }),
		items: contacts(1),
	});
	expect(allowed.success[0].json.messageId).toEqual(expect.any(String));
	const after = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(1) });
	expect(after.success[0].json.reason).toMatch(/sent before/);
	expect(sandbox.requests).toHaveLength(2);
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
	const sent = [
		'dailyEmailCount',
		'dailyEmailLimit',
		'dailyEmailsRemaining',
		'message',
		'messageId',
		'status',
	];
	expect(result.success.map((item) => Object.keys(item.json).sort())).toEqual([
		['details', 'error'],
		sent,
		sent,
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

test('History Size N remembers at least the last N emails sent, however many runs look them up, and forgets older ones', async () => {
	const workflow = savedWorkflow();
	const parameters = skipping({ historySize: 2 });
	const run = async (/** @type {any[]} */ items) => {
		const before = sandbox.requests.length;
		await runNode(sandbox, { ...workflow, parameters, items });
		return sandbox.requests.slice(before).map((request) => request.body.to);
	};
	expect(await run(contacts(2))).toHaveLength(2);
	// Each run asks the store about the same two emails; none may push another out.
	for (let day = 2; day <= 4; day++) expect(await run(contacts(2))).toEqual([]);
	// Four newer emails, in two runs: the first two are forgotten.
	expect(await run(contacts(2, 2))).toHaveLength(2);
	expect(await run(contacts(2, 4))).toHaveLength(2);
	expect(await run(contacts(1))).toEqual(['contact0@customer.test']);
	expect(await run(contacts(2, 4))).toEqual([]);
});

test('a failed store call never marks an email as sent: whichever call fails, a later run sends what was not sent, and nothing twice', async () => {
	for (let failing = 1; failing <= 4; failing++) {
		sandbox.reset();
		const workflow = savedWorkflow();
		deduplicationStore.failCalls(failing);
		const first = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(3),
			onError: 'continueRegularOutput',
		});
		expectEachInputExactlyOnce(first, 3);
		for (const item of first.success.filter((output) => output.json.error)) {
			expect(item.json.error).toMatch(/could not reach n8n’s deduplication store/);
			expect(item.json.details.description).toMatch(/database is locked/);
		}
		deduplicationStore.failCalls();
		await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(3),
			onError: 'continueRegularOutput',
		});
		expect(recipients().sort()).toEqual(contacts(3).map((contact) => contact.email));
	}
});

test('the Key is read per item: an expression that fails for item 0 (an empty date) fails item 0 only', async () => {
	const result = await runNode(sandbox, {
		...savedWorkflow(),
		parameters: skipping({ key: '={{ $json.orderDate.toDateTime().toISO() }}' }),
		items: [
			{ email: 'a@customer.test', orderDate: '' },
			{ email: 'b@customer.test', orderDate: '2026-11-20' },
		],
		onError: 'continueErrorOutput',
	});
	expect(result.errors.map((item) => item.pairedItem)).toEqual([{ item: 0 }]);
	expect(result.errors[0].json).toMatchObject({
		error: 'cannot convert to Luxon DateTime',
		details: { kind: 'invalid_input' },
	});
	expect(result.success.map((item) => item.pairedItem)).toEqual([{ item: 1 }]);
	expect(recipients()).toEqual(['b@customer.test']);
});

test('under Stop Workflow an "outcome unknown" email stops the run, and the error says what was queued', async () => {
	const workflow = await withUnknownOutcome();
	const before = sandbox.requests.length;
	const result = await runNode(sandbox, {
		...workflow,
		parameters: skipping({}, { concurrency: 1 }),
		items: [...contacts(1, 1), ...contacts(1), ...contacts(1, 2)],
	});
	expect(result.error?.message).toMatch(/no clear answer/);
	expect(result.error?.description).toContain('Queued in this run (item indexes): 0.');
	expect(sandbox.requests.slice(before).map((request) => request.body.to)).toEqual([
		'contact1@customer.test',
	]);
});

test('a dry run shows an email the real run would skip as skipped, and records nothing', async () => {
	const workflow = savedWorkflow();
	const dryRun = await runNode(sandbox, {
		...workflow,
		parameters: skipping({}, { validateOnly: true }),
		items: [...contacts(1), ...contacts(1)],
	});
	expect(dryRun.success[0].json).toMatchObject({ validateOnly: true, request: expect.any(Object) });
	expect(dryRun.success[1].json).toEqual({
		validateOnly: true,
		skipped: true,
		reason: expect.stringMatching(/item 0 of this run has the same key/),
	});
	expect(dryRun.success.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
	expect(sandbox.requests).toEqual([]);
	const real = await runNode(sandbox, { ...workflow, parameters: skipping(), items: contacts(1) });
	expect(real.success[0].json.messageId).toEqual(expect.any(String));
});

describe('never twice, never lost, across tries, stores that fail, crashes and executions at once', () => {
	const sentTo = () => sandbox.state.emails.map((email) => email.to);

	test('an email sent by a Retry On Fail try is recorded: the next execution skips it', async () => {
		const workflow = savedWorkflow();
		const parameters = skipping({}, { retries: 0, retrySendOnServerError: true });
		sandbox.injectFaults([{ path: '/email/send', status: 500 }]);
		const first = await runNode(sandbox, {
			...workflow,
			parameters,
			items: contacts(1),
			onError: 'continueRegularOutput',
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 0,
		});
		expect(first.success[0].json.messageId).toEqual(expect.any(String));
		const second = await runNode(sandbox, { ...workflow, parameters, items: contacts(1) });
		expect(second.success[0].json.skipped).toBe(true);
		expect(sentTo()).toEqual(['contact0@customer.test']);
	});

	test('a store error while the run takes back its claims is tried again: emails the run never sent are sent by the next run', async () => {
		const workflow = savedWorkflow();
		sandbox.setOptions({ dailyLimit: 1 });
		// Call 1 claims the three; the first write that takes claims back fails once.
		deduplicationStore.failCalls(2);
		const first = await runNode(sandbox, {
			...workflow,
			parameters: skipping({}, { concurrency: 1 }),
			items: contacts(3),
			onError: 'continueRegularOutput',
		});
		expect(first.success.map((item) => item.json.details?.kind ?? 'sent')).toEqual([
			'sent',
			'quota_exceeded',
			'quota_exceeded',
		]);
		sandbox.setOptions({ dailyLimit: 1000 });
		const next = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(3),
			onError: 'continueRegularOutput',
		});
		expect(
			next.success.map((item) => item.json.skipped ?? item.json.details?.kind ?? 'sent'),
		).toEqual([true, 'sent', 'sent']);
	});

	test('a store that keeps failing while the run takes back its claims: the items say so, later runs call them "outcome unknown", and one run with Retry Send On Server Error sends them', async () => {
		const workflow = savedWorkflow();
		sandbox.setOptions({ dailyLimit: 0 });
		deduplicationStore.failCalls(2, 3, 4, 5, 6, 7, 8);
		const first = await runNode(sandbox, {
			...workflow,
			parameters: skipping({}, { concurrency: 1 }),
			items: contacts(2),
			onError: 'continueRegularOutput',
		});
		for (const item of first.success) {
			expect(item.json.details.description).toMatch(
				/could not record that it was not sent.*run once with Retry Send On Server Error on/,
			);
		}
		deduplicationStore.failCalls();
		sandbox.setOptions({ dailyLimit: 1000 });
		const later = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(2),
			onError: 'continueRegularOutput',
		});
		expect(later.success.map((item) => item.json.details.kind)).toEqual([
			'outcome_unknown',
			'outcome_unknown',
		]);
		expect(later.success[0].json.details.description).toMatch(/Retry Send On Server Error on/);
		const released = await runNode(sandbox, {
			...workflow,
			parameters: skipping({}, { retrySendOnServerError: true }),
			items: contacts(2),
		});
		expect(released.success.map((item) => item.json.messageId)).toEqual([
			expect.any(String),
			expect.any(String),
		]);
		expect(sentTo()).toEqual(['contact0@customer.test', 'contact1@customer.test']);
	});

	test('after n8n dies mid-run, the emails answered a second before read as sent, not "outcome unknown"', async () => {
		const workflow = savedWorkflow();
		// Answers 0.7 s apart: emails 0 and 1 are answered more than a second before n8n dies,
		// as the fourth request arrives; email 2 was answered just then, email 3 is in flight.
		sandbox.setOptions({ latencyMs: 700 });
		await runNode(sandbox, {
			...workflow,
			parameters: skipping({}, { concurrency: 1 }),
			items: contacts(4),
			diesWhen: () => sandbox.requests.length >= 4,
		});
		await restartN8n();
		sandbox.setOptions({ latencyMs: 0 });
		const next = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(4),
			onError: 'continueRegularOutput',
		});
		expect(next.success.map((item) => item.json.skipped ?? item.json.details.kind)).toEqual([
			true,
			true,
			'outcome_unknown',
			'outcome_unknown',
		]);
	});

	test('executions side by side in one n8n lose none of each other’s records: the same 20 sign-ups again are all skipped', async () => {
		const workflow = savedWorkflow();
		const signUps = contacts(20).map((contact) => [contact]);
		const burst = () =>
			Promise.all(
				signUps.map((items) =>
					runNode(sandbox, {
						...workflow,
						parameters: skipping({ key: '={{ $json.email }}' }),
						items,
					}),
				),
			);
		await burst();
		const again = await burst();
		expect(again.map((result) => result.success[0].json.skipped)).toEqual(Array(20).fill(true));
		expect(sentTo()).toHaveLength(20);
	});

	test('the same email in two executions at once in one n8n is sent once; the other says its outcome is not known yet', async () => {
		const workflow = savedWorkflow();
		const run = () =>
			runNode(sandbox, {
				...workflow,
				parameters: skipping(),
				items: contacts(1),
				onError: 'continueRegularOutput',
			});
		const results = await Promise.all([run(), run()]);
		expect(sentTo()).toEqual(['contact0@customer.test']);
		const kinds = results.map((result) => result.success[0].json.details?.kind ?? 'sent');
		expect(kinds.sort()).toEqual(['outcome_unknown', 'sent']);
	});

	test('a store outage is its own kind, store_unavailable, temporary: not invalid input; a claim that failed once is tried once more', async () => {
		const workflow = savedWorkflow();
		deduplicationStore.failCalls(1);
		const once = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(1, 1),
		});
		expect(once.success[0].json.messageId).toEqual(expect.any(String));
		sandbox.reset();
		deduplicationStore.failCalls(1, 2);
		const result = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items: contacts(1),
		});
		expect(result.error.message).toMatch(/could not reach n8n’s deduplication store/);
		expect(result.error.description).toMatch(/kind: store_unavailable/);
		expect(result.error.failure?.cause ?? result.nodeError?.failure?.cause).toBe(
			'temporarily-unavailable',
		);
		expect(sandbox.requests).toEqual([]);
	});
});

test('History Size counts emails sent, not emails claimed: a run stopped after one email leaves the three before it remembered', async () => {
	const workflow = savedWorkflow();
	const parameters = skipping({ key: '={{ $json.email }}', historySize: 3 }, { concurrency: 1 });
	await runNode(sandbox, { ...workflow, parameters, items: contacts(1) });
	await runNode(sandbox, {
		...workflow,
		parameters,
		items: contacts(3, 1),
		stopWhen: () => sandbox.requests.length >= 2,
	});
	const again = await runNode(sandbox, { ...workflow, parameters, items: contacts(1) });
	expect(again.success[0].json.skipped).toBe(true);
});
