// The sign-up form example in n8n's queue mode: Redis holds the job queue, Postgres the
// executions, the main process takes bursts of real form submissions and two workers run them.
// The sandbox counts what reached BasicsEngage; the workers' logs tell which ran which execution.
import os from 'node:os';

import { mcpUrl, readExamples, waitForForm } from '../../dev/n8n-setup.mjs';
import { latestExecutionId, nodeOutput, ran, waitForExecutions } from '../e2e/executions.mjs';
import { connectMcp, exampleVariant, importWorkflow } from '../e2e/helpers.mjs';
import {
	executionsByWorker,
	SIGNUP,
	log,
	people,
	perWorker,
	slowStoreCalls,
	startQueueTestEnvironment,
	submitSignups,
} from './helpers.mjs';

const BURST = Number(process.env.QUEUE_TEST_BURST || 200);
const QUOTA_BURST = Math.max(10, Math.round(BURST / 2));
const QUOTA = Math.round(QUOTA_BURST * 0.4);
const SUCCESS_PATH = ['Add to newsletter list', 'Send welcome email', 'Sign-up form'];
const QUOTA_PATH = ['Retry tomorrow', 'Send welcome email', 'Sign-up form', 'Why did it fail?'];

let env;

beforeAll(async () => {
	const t0 = Date.now();
	env = await startQueueTestEnvironment({ workers: 2 });
	log(`started in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}, 300_000);

afterAll(async () => {
	const t0 = Date.now();
	await env?.stop();
	log(`stopped in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}, 120_000);

beforeEach(() => env.sandbox.reset());

const requestsTo = (p, target = env) => target.sandbox.requests.filter((r) => r.path === p);

/** Count of each value. */
function tally(values) {
	const counts = new Map();
	for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
	return counts;
}
const onceEach = (persons) => new Map(persons.map((p) => [p.email, 1]));
const emailed = (target = env) => tally(target.sandbox.state.emails.map((e) => e.to));
const asked = (target = env) => tally(requestsTo('/email/send', target).map((r) => r.body.to));
const added = (target = env) =>
	tally(
		requestsTo('/list/addProfiles', target).flatMap((r) => r.body.profiles.map((p) => p.email)),
	);

/** Fails with the executions that did not succeed, and why (a node's error or n8n's). */
function expectAllSucceeded(executions) {
	const failed = executions
		.filter((e) => e.status !== 'success')
		.map((e) => ({
			id: e.id,
			status: e.status,
			ranBy: e.ranBy,
			lastNode: e.lastNodeExecuted,
			error: e.error?.message,
			why: e.error?.description, // "n8n said: ..." when n8n failed the node
			node: e.error?.node?.name,
		}));
	expect(failed).toEqual([]);
}

test(`daily quota used up mid-burst (429): in every execution it reaches, on either worker, the send stops cleanly`, async () => {
	env.sandbox.setOptions({ dailyLimit: QUOTA });
	const persons = people(QUOTA_BURST, 'quota');
	const executions = await submitSignups(env, persons);

	expect(executions).toHaveLength(QUOTA_BURST);
	// the error output takes every 429: no execution fails
	expectAllSucceeded(executions);
	const accepted = new Set(env.sandbox.state.emails.map((e) => e.to));
	expect(accepted.size).toBe(QUOTA);
	expect(env.sandbox.state.emails).toHaveLength(QUOTA);
	// every execution asked once (a 429 is never retried), and only for its own person
	expect(asked()).toEqual(onceEach(persons));

	const refused = executions.filter((e) => !accepted.has(e.person.email));
	const sent = executions.filter((e) => accepted.has(e.person.email));
	expect(refused).toHaveLength(QUOTA_BURST - QUOTA);
	for (const execution of sent) expect(ran(execution)).toEqual(SUCCESS_PATH);
	for (const execution of refused) {
		expect(ran(execution)).toEqual(QUOTA_PATH);
		expect(nodeOutput(execution, 'Send welcome email')).toEqual([]);
		expect(nodeOutput(execution, 'Retry tomorrow')).toEqual([
			expect.objectContaining({
				Email: execution.person.email,
				details: expect.objectContaining({ kind: 'quota_exceeded', httpCode: 429 }),
			}),
		]);
	}
	// people whose email was refused are not added to the list
	expect(added()).toEqual(onceEach([...accepted].map((email) => ({ email }))));

	// the quota was hit by executions on both workers, which share it
	const refusedPerWorker = perWorker(refused);
	log(`quota: refused executions per worker ${JSON.stringify(refusedPerWorker)}`);
	expect(Object.keys(refusedPerWorker).sort()).toEqual(env.workers.map((w) => w.name).sort());
}, 330_000);

/**
 * Bursts of different people's sign-ups, each person's submitted several times, every person served
 * once: each execution succeeded on the success path, in queue mode on exactly one worker with
 * each worker at least 10% of them; the sandbox got exactly one email and one request per person
 * and one list add per execution; of each person's executions one names the email the sandbox
 * queued for that person, the others report it skipped.
 */
function expectEachServedOnce(target, executions, persons) {
	expectAllSucceeded(executions);
	for (const execution of executions) expect(ran(execution)).toEqual(SUCCESS_PATH);
	if (target.workers.length > 0) {
		expect(executions.filter((e) => e.ranBy.length !== 1).map((e) => [e.id, e.ranBy])).toEqual([]);
		const counts = perWorker(executions);
		expect(Object.keys(counts).sort()).toEqual(target.workers.map((w) => w.name).sort());
		for (const count of Object.values(counts))
			expect(count).toBeGreaterThanOrEqual(executions.length / 10);
	}
	for (const counted of [emailed(target), asked(target)])
		expect(counted).toEqual(onceEach(persons));
	expect(added(target)).toEqual(tally(executions.map((e) => e.person?.email)));
	const messageIds = new Map(target.sandbox.state.emails.map((e) => [e.to, e.messageId]));
	const outcomes = new Map(persons.map((p) => [p.email, []]));
	for (const execution of executions) {
		const email = execution.person?.email;
		const [output] = nodeOutput(execution, 'Send welcome email');
		const sent = output?.status === 'success' && output.messageId === messageIds.get(email);
		const outcome = output?.skipped === true ? 'skipped' : sent ? 'sent' : JSON.stringify(output);
		outcomes.get(email)?.push(outcome);
	}
	for (const list of outcomes.values()) list.sort();
	const eachPerson = (/** @type {unknown[]} */ runs) => [
		'sent',
		...runs.slice(1).map(() => 'skipped'),
	];
	expect(outcomes).toEqual(
		new Map([...outcomes].map(([email, runs]) => [email, eachPerson(runs)])),
	);
}

// "Skip Emails Already Sent" keeps its keys in n8n's deduplication store, one database row per node
// read and written back whole: executions running at once could lose each other's records. The
// form answers on receipt and 16 submissions are in flight, so each burst's executions overlap.
// The first burst is a double-clicked form: each person's two copies run at once, and only one
// may send. It is also the queue's own test: different people at once, each served once.
test.each([
	['queue mode, Postgres, two workers', 2],
	['regular mode on SQLite', 0],
])(
	`Skip Emails Already Sent (%s): a double-clicked form: each of ${BURST} sign-ups posted twice at once: each person emailed exactly once, the copy reports skipped (in queue mode spread over both workers, where at most 8 a round may fail store_unavailable or outcome_unknown); then the same ${BURST} again: no one is emailed twice (in queue mode a repeat gets no email whichever worker runs it; at most 8 fail, as above)`,
	async (mode, workers) => {
		// regular mode: an n8n of its own, for this test only (the queue environment stays idle)
		const target = workers ? env : await startQueueTestEnvironment({ workers: 0 });
		try {
			const formPath = 'basicsengage-signup-skip-burst';
			const { workflow, node } = exampleVariant(SIGNUP, {
				id: 'beQueueSkipBurst1',
				label: 'skip emails already sent',
				triggerPath: formPath,
			});
			const settings = { key: '={{ $json.Email }}' };
			node('Send welcome email').parameters.options = { skipAlreadySent: { settings } };
			await importWorkflow(target, workflow);
			await waitForForm(target.formUrl(formPath));
			const options = { workflowId: workflow.id, formPath };
			const persons = people(BURST, 'skip');
			const doubleClicks = await skipBurst(target, persons, { ...options, copies: 2 });
			const twiceAtOnce = emailedTwice(target, persons);
			const { executions, skippedOn, ...first } = doubleClicks;
			log(`${mode}: executions per worker ${JSON.stringify(perWorker(executions))}`);
			const again = await skipBurst(target, persons, options);
			const { skippedOn: skippedAgainOn, executions: repeats, ...second } = again;
			const figures = {
				doubleClicked: { emailedTwice: twiceAtOnce, ...first },
				sameAgain: second,
				emailedTwice: emailedTwice(target, persons),
				never: persons.filter((p) => !emailed(target).has(p.email)).length,
			};
			console.log(
				`Skip under a burst, ${mode}: double-clicked form (${BURST} sign-ups posted twice at once): ` +
					`${twiceAtOnce} emailed twice, ${first.emailed} emails, ${first.skipped} copies skipped, failed ${JSON.stringify(first.failed)}; ` +
					`the same ${BURST} again: ${second.emailed} emailed, ${second.skipped} skipped, failed ${JSON.stringify(second.failed)}; ` +
					`in all ${figures.emailedTwice} emailed twice, ${figures.never} never; ` +
					`${slowStoreCalls(target)} runs logged a store call slower than the settle delay; load average ${os.loadavg().map((l) => l.toFixed(1))}`,
			);
			// Across workers what the settle delay cannot rule out under load (a claim written over five
			// times, store_unavailable; a call slower than the delay putting `sending|` back, later
			// outcome_unknown) fails a few, never sending twice: measured 0 to 3 in a round of 200 at
			// load 12 to 15. One process has no such case.
			const allowed = workers ? 8 : 0;
			for (const round of [first, second]) {
				const failures = Object.entries(round.failed);
				expect(failures.filter(([kind]) => !RESIDUAL.includes(kind))).toEqual([]);
				expect(failures.reduce((sum, [, count]) => sum + count, 0)).toBeLessThanOrEqual(allowed);
			}
			const failedIn = (/** @type {{ failed: Record<string, number> }} */ round) =>
				Object.values(round.failed).reduce((sum, count) => sum + count, 0);
			expect(figures).toEqual({
				doubleClicked: {
					emailedTwice: 0,
					emailed: BURST,
					skipped: BURST - failedIn(first),
					failed: first.failed,
				},
				sameAgain: { emailed: 0, skipped: BURST - failedIn(second), failed: second.failed },
				emailedTwice: 0,
				never: 0,
			});
			// queue mode: the skipped copies and repeats ran on every worker
			const workerNames = target.workers.map((w) => w.name).sort();
			if (workers) expect([skippedOn, skippedAgainOn]).toEqual([workerNames, workerNames]);
			const served = [...executions, ...repeats].filter(
				(e) => !nodeOutput(e, 'Send welcome email', 1).length,
			);
			expectEachServedOnce(target, served, persons);
		} finally {
			if (!workers) await target.stop();
		}
	},
	900_000,
);

/** The failures a burst across workers may have, each saying nothing was sent twice. */
const RESIDUAL = ['store_unavailable', 'outcome_unknown'];

const emailedTwice = (target, persons) =>
	persons.filter((p) => emailed(target).get(p.email) > 1).length;

/**
 * Submits every person's sign-up (`options.copies` times at once) and waits for the executions:
 * the executions, emails the sandbox accepted, sends skipped (and the workers that ran them),
 * failures by kind (`details.kind` or the status).
 */
async function skipBurst(target, persons, options) {
	const before = target.sandbox.state.emails.length;
	const executions = await submitSignups(target, persons, options);
	expect(executions).toHaveLength(persons.length * (options.copies ?? 1));
	const failed = {};
	const why = {};
	let skipped = 0;
	const skippedOn = new Set();
	for (const execution of executions) {
		const error = nodeOutput(execution, 'Send welcome email', 1)[0];
		const kind =
			execution.status !== 'success' ? `execution ${execution.status}` : error?.details?.kind;
		if (kind) {
			failed[kind] = (failed[kind] ?? 0) + 1;
			why[kind] ??= error?.details?.description ?? execution.error?.message;
		}
		if (nodeOutput(execution, 'Send welcome email')[0]?.skipped === true) {
			skipped++;
			execution.ranBy.forEach((worker) => skippedOn.add(worker));
		}
	}
	// one example of each kind of failure, for the report
	for (const [kind, text] of Object.entries(why)) log(`${kind}: ${text}`);
	const emailed = target.sandbox.state.emails.length - before;
	return { executions, emailed, skipped, failed, skippedOn: [...skippedOn].sort() };
}

test('MCP: a tool call of an MCP client runs through a worker and sends exactly one email', async () => {
	const example = readExamples().find((e) => e.mcpPath);
	const afterId = await latestExecutionId(env.rest, example.id);
	const mcp = await connectMcp(mcpUrl(env.n8n.url, example.mcpPath), 'basicsengage-queue-test');
	try {
		const result = await mcp.client.callTool({
			name: 'Send_Email',
			arguments: { to: 'mcp.queue@customer.test', subject: 'Through a worker', body: 'Hi!' },
		});
		expect(result.isError).not.toBe(true);
		expect(JSON.parse(result.content[0].text)[0].messageId).toEqual(expect.any(String));
	} finally {
		await mcp.close();
	}
	const [execution] = await waitForExecutions(env.rest, example.id, { afterId, count: 1 });
	const ranBy = executionsByWorker(env.workers).get(String(execution.id)) ?? [];
	log(
		`MCP tool call: execution ${execution.id} (${execution.status}) ran on ${JSON.stringify(ranBy)}`,
	);
	expect(ranBy).toHaveLength(1);
	expect(requestsTo('/email/send').map((r) => r.body.to)).toEqual(['mcp.queue@customer.test']);
}, 120_000);
