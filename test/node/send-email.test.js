// @ts-check
'use strict';

/**
 * Send Email, and its option "Skip Emails Already Sent": a key per email in n8n's deduplication
 * store (the Remove Duplicates node's), shared by runs of the same saved workflow and node.
 * Concurrency and output order: operations.test.js; never twice and never stranded under any
 * mix of faults, store failures, retries and deaths: test/reliability/model.test.js.
 */

const { AsyncLocalStorage } = require('node:async_hooks');
const { randomUUID } = require('node:crypto');
const {
	contacts,
	deduplicationStore,
	delay,
	expectEachInputExactlyOnce,
	restartN8n,
	runNode,
	startWorker,
	savedWorkflow,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ dailyLimit: 1000 });

const sentBodies = () => sandbox.requestsTo('/email/send').map((request) => request.body);

describe('Send Email', () => {
	test('spec: only one of html, text, templateId is sent (content selector)', async () => {
		for (const content of ['html', 'text', 'template']) {
			sandbox.reset();
			await runNode(sandbox, {
				parameters: sendParameters({
					content,
					html: '<p>Hi</p>',
					text: 'Hi',
					templateId: 'tmpl_welcome',
				}),
				items: contacts(1),
			});
			const body = sentBodies()[0];
			const contentFields = ['html', 'text', 'templateId'].filter((field) => field in body);
			expect(contentFields).toEqual([content === 'template' ? 'templateId' : content]);
		}
	});

	test('template with JSON variables: the object is sent as given; without variables, no templateVariables field', async () => {
		const template = { content: 'template', templateId: 'tmpl_welcome' };
		const json = '={{ JSON.stringify({ firstName: $json.firstName, company: "Acme, Inc." }) }}';
		await runNode(sandbox, {
			parameters: sendParameters({
				...template,
				templateVariablesMode: 'json',
				templateVariablesJson: json,
			}),
			items: contacts(1),
		});
		await runNode(sandbox, { parameters: sendParameters(template), items: contacts(1) });
		const [withVariables, without] = sentBodies();
		expect(withVariables.templateVariables).toEqual({ firstName: 'First0', company: 'Acme, Inc.' });
		expect(without).not.toHaveProperty('templateVariables');
	});
});

// Skip Emails Already Sent

/** @param {Record<string, unknown>} settings @param {Record<string, unknown>} [options] */
const skipping = (settings = {}, options = {}) =>
	sendParameters({ options: { ...options, skipAlreadySent: { settings } } });

/**
 * Runs Send Email with Skip on as this saved workflow: `settings`, `options` and `requestOptions`
 * are its parameters, the rest goes to runNode. @param {any} workflow @param {Record<string, any>} [run]
 */
const run = (
	workflow,
	{ settings = {}, options = {}, requestOptions, items = contacts(1), ...more } = {},
) =>
	runNode(sandbox, {
		...workflow,
		parameters: { ...skipping(settings, options), ...(requestOptions && { requestOptions }) },
		items,
		...more,
	});

const recipients = () => sandbox.requests.map((request) => request.body.to);
const sentTo = () => sandbox.state.emails.map((email) => email.to);
/** What each output item is: true when skipped, else its error kind or 'sent'. */
const outcomes = (/** @type {import('../support').NodeRun} */ result) =>
	result.success.map((item) => item.json.skipped ?? item.json.details?.kind ?? 'sent');

/** A saved workflow whose first run sent contact 0 and lost the answer: its outcome is unknown. */
async function withUnknownOutcome() {
	const workflow = savedWorkflow();
	sandbox.injectFaults([{ action: 'drop' }]);
	await run(workflow, { options: { retries: 0 }, onError: 'continueErrorOutput' });
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
	const first = await run(workflow, { items: contacts(2) });
	expect(outcomes(first)).toEqual(['sent', 'sent']);
	const second = await run(workflow, { items: contacts(3) });
	expect(recipients()).toEqual(contacts(3).map((contact) => contact.email));
	expect(outcomes(second)).toEqual([true, true, 'sent']);
	expect(second.success[0].json.reason).toMatch(/sent before/);
	expectEachInputExactlyOnce(second, 3);
	expect(sandbox.state.quota.get('be_sandbox_demo_key')?.count).toBe(3);
});

test('on: the same key twice in one run sends the first and skips the second, naming it', async () => {
	const result = await run(savedWorkflow(), { items: [...contacts(1), ...contacts(1)] });
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
	['the same email, the recipient in another case, is skipped', RESET(1), RESET(1), 'JANE'],
	['another body (a new reset link, same subject) is another email, sent', RESET(1), RESET(2)],
	[
		'the same template with other variables (a second order confirmation) is another, sent',
		ORDER(1001),
		ORDER(1002),
	],
])('the default key is the whole email: %s', async (_, first, second, name = 'jane') => {
	const workflow = savedWorkflow();
	const send = (/** @type {object} */ email, /** @type {string} */ to) =>
		runNode(sandbox, {
			...workflow,
			parameters: { ...skipping(), ...email },
			items: [{ email: to }],
		});
	await send(first, 'jane@customer.test');
	const again = await send(second, `${name}@customer.test`);
	const skipped = name === 'JANE';
	expect(again.success[0].json.skipped ?? false).toBe(skipped);
	expect(sandbox.state.emails).toHaveLength(skipped ? 1 : 2);
});

test('a Key expression (an order id) decides instead of recipient and subject', async () => {
	const workflow = savedWorkflow();
	const settings = { key: '={{ $json.orderId }}' };
	await run(workflow, { settings, items: [{ email: 'a@customer.test', orderId: 'o-1' }] });
	const result = await run(workflow, {
		settings,
		items: [
			{ email: 'b@customer.test', orderId: 'o-1' },
			{ email: 'a@customer.test', orderId: 'o-2' },
		],
	});
	expect(outcomes(result)).toEqual([true, 'sent']);
	expect(recipients()).toEqual(['a@customer.test', 'a@customer.test']);
});

test('scope: "This Node" is per node, "This Workflow" is shared by the nodes of the workflow', async () => {
	for (const [scope, skippedByOtherNode] of [
		['node', false],
		['workflow', true],
	]) {
		const workflowId = `wf-${randomUUID()}`;
		const node = () => ({ workflowId, nodeOverrides: { id: randomUUID() } });
		await run(node(), { settings: { scope } });
		const other = await run(node(), { settings: { scope } });
		expect(other.success[0].json.skipped === true).toBe(skippedByOtherNode);
	}
});

// After a refusal or a 5xx nothing was queued, so a later run sends it; after a lost answer, a
// timeout or a 504 a later run fails the item as outcome_unknown, never "sent before": the model,
// test/reliability/model.test.js.
test('an email sent again after a lost answer and then refused still says it may have been queued, and a later run does not send it', async () => {
	const workflow = savedWorkflow();
	sandbox.injectFaults([{ action: 'drop' }, { status: 400 }]);
	const options = { retries: 1, retryWait: 0, retrySendOnServerError: true };
	const first = await run(workflow, { options, onError: 'continueErrorOutput' });
	expect(first.errors[0].json.details).toMatchObject({
		kind: 'network_error',
		description: expect.stringMatching(/may have been queued.* Sent again: BasicsEngage rejected/),
	});
	const later = await run(workflow, { onError: 'continueErrorOutput' });
	expect(later.errors[0].json.details.kind).toBe('outcome_unknown');
});

test('an unknown outcome is sent again only when Retry Send On Server Error allows it, then remembered', async () => {
	const workflow = await withUnknownOutcome();
	const allowed = await run(workflow, { options: { retrySendOnServerError: true } });
	expect(outcomes(allowed)).toEqual(['sent']);
	const after = await run(workflow);
	expect(after.success[0].json.reason).toMatch(/sent before/);
	expect(sandbox.requests).toHaveLength(2);
});

test('as an AI tool, a repeated call of another execution is skipped', async () => {
	const workflow = savedWorkflow();
	const parameters = sendParameters({
		to: "={{ $fromAI('to', 'recipient', 'string') }}",
		options: { skipAlreadySent: { settings: {} } },
	});
	const call = () =>
		runNode(sandbox, { ...workflow, parameters, toolCalls: [{ to: 'jane@customer.test' }] });
	await call();
	const again = await call();
	expect(JSON.parse(String(again.toolAnswers[0].answer))).toEqual([
		{ skipped: true, reason: expect.stringMatching(/sent before/) },
	]);
	expect(sandbox.requests).toHaveLength(1);
});

test('History Size N remembers at least the last N emails sent, however many runs look them up, and forgets older ones', async () => {
	const workflow = savedWorkflow();
	const sendNew = async (/** @type {any[]} */ items) => {
		const before = sandbox.requests.length;
		await run(workflow, { settings: { historySize: 2 }, items });
		return sandbox.requests.slice(before).map((request) => request.body.to);
	};
	expect(await sendNew(contacts(2))).toHaveLength(2);
	// Each run asks the store about the same two emails; none may push another out.
	for (let day = 2; day <= 4; day++) expect(await sendNew(contacts(2))).toEqual([]);
	// The row keeps 2 × (N + 100) entries (an email in flight on any worker takes two): 210 newer
	// emails push the first two out.
	expect(await sendNew(contacts(210, 2))).toHaveLength(210);
	expect(await sendNew(contacts(1))).toEqual(['contact0@customer.test']);
	expect(await sendNew(contacts(2, 210))).toEqual([]);
});

test('History Size counts emails sent, not emails claimed: a run stopped after one email leaves the three before it remembered', async () => {
	const workflow = savedWorkflow();
	const more = {
		settings: { key: '={{ $json.email }}', historySize: 3 },
		options: { concurrency: 1 },
	};
	await run(workflow, more);
	await run(workflow, {
		...more,
		items: contacts(3, 1),
		stopWhen: () => sandbox.requests.length >= 2,
	});
	const again = await run(workflow, more);
	expect(again.success[0].json.skipped).toBe(true);
});

test('History Size trimming an "outcome unknown" email’s `sent|` entry, not yet its `sending|`, never makes it read "sent before"', async () => {
	const workflow = savedWorkflow();
	const options = { concurrency: 1, retries: 0 };
	const send = (/** @type {any[]} */ items, historySize = 10000) =>
		run(workflow, { settings: { historySize }, options, items, onError: 'continueRegularOutput' });
	sandbox.injectFaults([{ status: 504 }]);
	await send(contacts(10));
	await send(contacts(1, 10));
	// Sized to trim contact 0's `sent|` and keep its `sending|`; then the next 55 trim that too.
	await send(contacts(65, 11), 1);
	expect(outcomes(await send(contacts(1), 1))).toEqual(['outcome_unknown']);
	await send(contacts(55, 76), 1);
	expect(outcomes(await send(contacts(1), 1))).toEqual(['sent']);
});

test('the Key is read per item: an expression that fails for item 0 (an empty date) fails item 0 only', async () => {
	const result = await run(savedWorkflow(), {
		settings: { key: '={{ $json.orderDate.toDateTime().toISO() }}' },
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
	const result = await run(workflow, {
		options: { concurrency: 1 },
		items: [...contacts(1, 1), ...contacts(1), ...contacts(1, 2)],
	});
	expect(result.error?.message).toMatch(/no clear answer/);
	expect(result.error?.description).toContain('Queued in this run (item indexes): 0.');
	expect(recipients().slice(before)).toEqual(['contact1@customer.test']);
});

test('a dry run shows an email the real run would skip as skipped, and records nothing: the real run afterwards sends it', async () => {
	const workflow = savedWorkflow();
	const dryRun = await run(workflow, {
		options: { validateOnly: true },
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
	expect(outcomes(await run(workflow))).toEqual(['sent']);
});

describe('never twice, never lost, across stores that fail, crashes and executions at once', () => {
	test('a store that keeps failing while the run takes back its claims: the items say so, later runs call them "outcome unknown", and one run with Retry Send On Server Error sends them', async () => {
		const workflow = savedWorkflow();
		const more = { items: contacts(2), onError: 'continueRegularOutput' };
		sandbox.setOptions({ dailyLimit: 0 });
		// The claim and its check go through; every write taking the claims back fails.
		deduplicationStore.failCalls(3, 4, 5, 6, 7, 8, 9, 10);
		const first = await run(workflow, { ...more, options: { concurrency: 1 } });
		for (const item of first.success) {
			expect(item.json.details?.description).toMatch(
				/could not record that it was not sent.*run once with Retry Send On Server Error on/,
			);
		}
		deduplicationStore.failCalls();
		sandbox.setOptions({ dailyLimit: 1000 });
		// Its Timeout bounds how long a later run waits for an email that may be in flight elsewhere.
		const later = await run(workflow, { ...more, requestOptions: { timeout: 100 } });
		expect(outcomes(later)).toEqual(['outcome_unknown', 'outcome_unknown']);
		expect(later.success[0].json.details?.description).toMatch(/Retry Send On Server Error on/);
		const released = await run(workflow, {
			...more,
			options: { retrySendOnServerError: true },
			requestOptions: { timeout: 100 },
		});
		expect(outcomes(released)).toEqual(['sent', 'sent']);
		expect(sentTo()).toEqual(['contact0@customer.test', 'contact1@customer.test']);
	});

	test('after n8n dies mid-run, the emails answered a second before read as sent, not "outcome unknown"', async () => {
		const workflow = savedWorkflow();
		// Answers 0.7 s apart: emails 0 and 1 are answered more than a second before n8n dies,
		// as the fourth request arrives; email 2 was answered just then, email 3 is in flight.
		sandbox.setOptions({ latencyMs: 700 });
		await run(workflow, {
			options: { concurrency: 1 },
			items: contacts(4),
			diesWhen: () => sandbox.requests.length >= 4,
		});
		await restartN8n();
		sandbox.setOptions({ latencyMs: 0 });
		// Its Timeout bounds how long the next run waits for the emails a dead n8n had in flight.
		const next = await run(workflow, {
			items: contacts(4),
			onError: 'continueRegularOutput',
			requestOptions: { timeout: 500 },
		});
		expect(outcomes(next)).toEqual([true, true, 'outcome_unknown', 'outcome_unknown']);
	});

	test('executions side by side in one n8n lose none of each other’s records: the same 20 sign-ups again are all skipped', async () => {
		const workflow = savedWorkflow();
		const burst = () =>
			Promise.all(
				contacts(20).map((contact) =>
					run(workflow, { settings: { key: '={{ $json.email }}' }, items: [contact] }),
				),
			);
		await burst();
		const again = await burst();
		expect(again.map((result) => result.success[0].json.skipped)).toEqual(Array(20).fill(true));
		expect(sentTo()).toHaveLength(20);
	});

	test('two executions sending the same email at once in one n8n: one sends it, the copy waits and is skipped, also with Retry Send On Server Error', async () => {
		for (const retrySendOnServerError of [false, true]) {
			sandbox.reset();
			sandbox.setOptions({ latencyMs: 300 });
			const workflow = savedWorkflow();
			const copies = await Promise.all(
				[0, 1].map(() => run(workflow, { options: { retrySendOnServerError } })),
			);
			sandbox.setOptions({ latencyMs: 0 });
			expect(sentTo()).toEqual(['contact0@customer.test']);
			expect(copies.flatMap(outcomes).sort()).toEqual(['sent', true]);
			const copy = copies.find((result) => result.success[0].json.skipped);
			expect(copy?.success[0].json.reason).toMatch(/another execution sent it just now/);
		}
	});

	test('a Stop ends a copy’s wait for the same email in flight in another execution: the copy sends nothing, and ends before that email is answered', async () => {
		sandbox.setOptions({ latencyMs: 1500 });
		const workflow = savedWorkflow();
		const first = run(workflow);
		while (sandbox.requests.length === 0) await delay(10);
		const stopAt = Date.now() + 400;
		const copy = await run(workflow, { stopWhen: () => Date.now() > stopAt });
		const answeredBeforeCopyEnded = sandbox.state.emails.length;
		await first;
		sandbox.setOptions({ latencyMs: 0 });
		expect({ answeredBeforeCopyEnded, copyOutput: copy.success }).toEqual({
			answeredBeforeCopyEnded: 0,
			copyOutput: [],
		});
		expect(sandbox.requests).toHaveLength(1);
	});

	test('two workers sending the same email at once: one sends it, the copy waits for it and is skipped, also with Retry Send On Server Error', async () => {
		const workerB = await startWorker();
		for (const retrySendOnServerError of [false, true]) {
			sandbox.reset();
			sandbox.setOptions({ latencyMs: 300 });
			const workflow = savedWorkflow();
			const options = { retrySendOnServerError };
			const copies = await Promise.all([
				run(workflow, { options }),
				run(workflow, { options, loaded: workerB }),
			]);
			sandbox.setOptions({ latencyMs: 0 });
			expect(sentTo()).toEqual(['contact0@customer.test']);
			expect(copies.flatMap(outcomes).sort()).toEqual(['sent', true]);
		}
	});

	test('two workers claiming one email, each with another execution’s store call beside: those calls cannot put back each claim’s token in turn, so the email is sent once', async () => {
		// X (this worker) and Z (worker B) send the same email; Y and V, an email each, on the same
		// workers. Z's claim reads before X's writes and writes after it, erasing X's token. Before
		// the claim kept its process's turn until it had asked again, Y read between and wrote after
		// Z (putting X's token back), V read after Z and wrote after X had asked (putting Z's back):
		// each found its own token, and both sent.
		const workerB = await startWorker();
		const workflow = savedWorkflow();
		const runOf = new AsyncLocalStorage();
		/** Each first claim's and check's read and write, once done. */
		const done = new Set();
		/** @type {Map<string, { promise: Promise<void>, resolve: () => void }>} */
		const events = new Map();
		const event = (/** @type {string} */ name) => {
			if (!events.has(name)) {
				let resolve = () => {};
				const promise = new Promise((settled) => (resolve = () => settled(undefined)));
				events.set(name, { promise: /** @type {Promise<void>} */ (promise), resolve });
			}
			return /** @type {{ promise: Promise<void>, resolve: () => void }} */ (events.get(name));
		};
		const after = (/** @type {string[]} */ names, ms = 2000) =>
			Promise.race([Promise.all(names.map((name) => event(name).promise)), delay(ms)]);
		/** @param {string} name @param {number} contact @param {any} [loaded] */
		const start = (name, contact, loaded) =>
			runOf.run(name, () =>
				run(workflow, {
					settings: { key: '={{ $json.email }}' },
					items: contacts(1, contact),
					...(loaded && { loaded }),
				}),
			);
		/** @type {Promise<unknown>[]} */
		const besides = [];
		/** What each waits for (a check: only a call that has read since the claim). @type {Record<string, () => Promise<unknown>>} */
		const gates = {
			'Z claim read': () => after(['X claim read arriving']),
			'X claim read': async () => {
				besides.push(start('Y', 1), start('V', 2, workerB));
				await event('Z claim read').promise;
				await delay(200); // Y's and V's claims queue behind X's and Z's
			},
			// Less than the least settle delay after X's write.
			'Z claim write': async () =>
				await after(['X claim write']).then(() => after(['Y claim read'], 30)),
			'Y claim write': () => after(['Z claim write', 'V claim read']),
			'V claim read': () => after(['Z claim write']),
			'X check read': () =>
				done.has('Y claim read') ? after(['Y claim write']) : Promise.resolve(),
			'V claim write': () => after(['X check write']),
			'Z check read': () =>
				done.has('V claim read') ? after(['V claim write']) : Promise.resolve(),
		};
		deduplicationStore.roundTrip = (items, before) => {
			const check = items.length === 1 && items[0].startsWith('claim|');
			const kind = items.some((item) => item.startsWith('sent|')) ? 'claim' : check && 'check';
			const name = `${runOf.getStore()} ${kind} ${before}`;
			if (!kind || events.has(`${name} arriving`)) return undefined;
			event(`${name} arriving`).resolve();
			return (gates[name]?.() ?? Promise.resolve()).then(async () => {
				await new Promise(setImmediate); // read or written
				done.add(name);
				event(name).resolve();
			});
		};
		let x;
		try {
			[x] = await Promise.all([start('X', 0), start('Z', 0, workerB)]);
			await Promise.all(besides);
		} finally {
			deduplicationStore.roundTrip = () => undefined;
		}
		expect(sentTo().sort()).toEqual(contacts(3).map((contact) => contact.email));
		// X's and Z's claims, held 200 ms, outlasted the least settle delay: n8n's log says so.
		const slow = /store took \d+ ms, longer than the settle delay \(50 ms\)/;
		expect(x.logs).toContainEqual(expect.stringMatching(slow));
	});

	test('History Size across workers: a worker’s new email pushes none of the last N emails out, another worker’s included', async () => {
		const workflow = savedWorkflow();
		const workerB = await startWorker();
		const settings = { key: '={{ $json.email }}', historySize: 100 };
		await run(workflow, { settings, items: contacts(100, 1000) });
		await run(workflow, { settings, items: contacts(100), loaded: workerB });
		await run(workflow, { settings, items: contacts(100, 100), loaded: workerB });
		await run(workflow, { settings, items: contacts(1, 2000) });
		// The last 100 emails but one are worker B's second hundred.
		const again = await run(workflow, { settings, items: contacts(99, 101) });
		expect(outcomes(again)).toEqual(Array(99).fill(true));
	});

	test('a store outage is its own kind, store_unavailable, temporary: not invalid input; a claim that failed once is tried once more', async () => {
		const workflow = savedWorkflow();
		deduplicationStore.failCalls(1);
		expect(outcomes(await run(workflow, { items: contacts(1, 1) }))).toEqual(['sent']);
		sandbox.reset();
		deduplicationStore.failCalls(1, 2);
		const result = await run(workflow);
		expect(result.error?.message).toMatch(/could not use n8n’s deduplication store/);
		expect(result.error?.description).toMatch(/kind: store_unavailable/);
		expect(result.error?.failure?.cause ?? result.nodeError?.failure?.cause).toBe(
			'temporarily-unavailable',
		);
		expect(sandbox.requests).toEqual([]);
	});
});
