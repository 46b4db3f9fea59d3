// @ts-check
'use strict';

/**
 * n8n runs the node again. Its node setting "Retry On Fail" runs the whole node again, with the
 * same input, after it throws, and also when its first output item carries `json.error`, in every
 * On Error mode (n8n-core's workflow-execute). Retry in n8n's Executions list runs a failed
 * execution on from the node that failed, with that execution's node context (test/harness:
 * `retryExecution`, as n8n's ExecutionService.retry does it). The node remembers in that context
 * what each request did: what was done is answered as it was, what did nothing is sent, and what
 * may have taken effect is never sent unasked. Every operation under any fault, both ways (a list
 * or campaign never created twice): test/reliability/model.test.js.
 */

const {
	addProfilesParameters,
	contacts,
	createListParameters,
	expectEachInputExactlyOnce,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const SPRING = 'aaaaaaaaaaaaaaaaaaaaaaaa';

const sandbox = useSandbox({
	dailyLimit: 1000,
	lists: [{ listId: 'list_spring', profiles: [{ email: 'ann@customer.test' }] }],
	campaigns: [{ _id: SPRING, name: 'Spring', subject: 'Hi', recepientList: ['list_spring'] }],
});

// n8n reads a wait of 0 as its default of 1000 ms; 1 ms keeps the tries back to back.
const retryOnFail = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 };
/** Lets a request through untouched, so the next scripted fault hits a later request. */
const pass = { action: /** @type {const} */ ('delay'), delayMs: 0 };
const MODES = /** @type {const} */ ([
	'stopWorkflow',
	'continueRegularOutput',
	'continueErrorOutput',
]);
const BUSY = { status: 400, body: { status: 'error', error: 'Busy' } };
const named = { listName: '=Segment {{ $itemIndex }}' };
const segments = (/** @type {number[]} */ indexes) => indexes.map((index) => `Segment ${index}`);

/** @param {any[]} requests */
const recipients = (requests) => requests.map((request) => request.body.to);
const FIVE_PASS = [pass, pass, pass, pass, pass];
const emailsOf = (/** @type {number[]} */ indexes) =>
	indexes.map((index) => `contact${index}@customer.test`);
const range = (/** @type {number} */ from, /** @type {number} */ to) =>
	Array.from({ length: to - from }, (_, offset) => from + offset);

// A refusal did nothing, so it is sent again; what may have taken effect never is (the model).
// Add Profiles' new list under Retry On Fail: test/node/add-profiles.test.js.
test.each(MODES)(
	'Create List: a refusal (400) on the first item is sent again; the other lists are created once (%s)',
	async (onError) => {
		sandbox.injectFaults([{ path: '/list/create', ...BUSY }]);
		const [parameters, items] = [createListParameters(named), [{}, {}, {}]];
		const result = await runNode(sandbox, { parameters, items, onError, ...retryOnFail });
		const created = sandbox.requests.map((request) => request.body.listName);
		expect(created.sort()).toEqual(segments([0, 0, 1, 2]));
		if (onError !== 'stopWorkflow') expectEachInputExactlyOnce(result, 3);
	},
);

test('Send Email: Retry Send On Server Error allows the unknown email exactly one more attempt across n8n tries', async () => {
	sandbox.injectFaults([pass, { status: 500 }, { status: 500 }]);
	const result = await runNode(sandbox, {
		parameters: sendParameters({
			options: { concurrency: 1, retries: 0, retrySendOnServerError: true },
		}),
		items: contacts(3),
		...retryOnFail,
	});
	expect(result.error).toBeDefined();
	// Item 1 is tried in try 1 and once more in try 2, then answered from memory while try 3
	// sends item 2.
	expect(recipients(sandbox.requests)).toEqual([
		'contact0@customer.test',
		'contact1@customer.test',
		'contact1@customer.test',
		'contact2@customer.test',
	]);
});

test('Send Email: a later try that stops sending (a 401) answers the emails an earlier try queued as queued, never "Not sent"', async () => {
	sandbox.injectFaults([BUSY, pass, pass, { status: 401 }]);
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options: { concurrency: 1 } }),
		items: contacts(3),
		onError: 'continueRegularOutput',
		...{ ...retryOnFail, maxTries: 2 },
	});
	expect(recipients(sandbox.requests)).toEqual(emailsOf([0, 1, 2, 0]));
	const said = result.success.map((item) => item.json.details?.kind ?? item.json.status);
	expect(said).toEqual(['invalid_api_key', 'success', 'success']);
});

test('Send Email: an email whose answer was lost, refused when the next try sends it again, still says it may have been queued', async () => {
	sandbox.injectFaults([{ action: 'drop' }, BUSY]);
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options: { retries: 0, retrySendOnServerError: true } }),
		items: contacts(1),
		onError: 'continueRegularOutput',
		...{ ...retryOnFail, maxTries: 2 },
	});
	expect(result.success[0].json.details).toMatchObject({
		kind: 'network_error',
		description: expect.stringMatching(/may have been queued.* Sent again: .*Busy/),
	});
});

test('Send Email: a run that succeeds forgets what it did: a later, separate run sends again', async () => {
	for (let run = 0; run < 2; run++) {
		const result = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(2),
			...retryOnFail,
		});
		expect(result.success).toHaveLength(2);
	}
	expect(sandbox.state.emails).toHaveLength(4);
});

describe('as an AI tool', () => {
	test.each([
		[
			'Send Email',
			sendParameters({ to: "={{ $fromAI('to', 'recipient', 'string') }}" }),
			{ to: 'jane@customer.test' },
			/may have been queued/,
		],
		[
			'Send Campaign',
			sendCampaignParameters({
				campaignId: "={{ $fromAI('campaignId', 'ID of the campaign', 'string') }}",
			}),
			{ campaignId: SPRING },
			/may have started sending/,
		],
	])(
		'%s: n8n retries the call with a new run index; the same request is not sent again',
		async (_, parameters, call, says) => {
			sandbox.injectFaults([{ status: 502 }, { status: 502 }, { status: 502 }]);
			const result = await runNode(sandbox, { parameters, toolCalls: [call], ...retryOnFail });
			expect(result.toolAnswers[0].thrown).toMatch(says);
			expect(sandbox.requests).toHaveLength(1);
		},
	);

	test('two calls at once: the one that succeeds forgets only its own record, so the retry of the other, whose answer was lost, does not send its email again', async () => {
		// Whichever call arrives first has its answer dropped (the email is queued); the other is
		// answered a moment later, before n8n's retry of the first.
		sandbox.injectFaults([{ action: 'drop' }, { action: 'delay', delayMs: 100 }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters({ to: "={{ $fromAI('to', 'recipient', 'string') }}" }),
			toolCalls: [{ to: 'jane@customer.test' }, { to: 'joe@customer.test' }],
			parallelToolCalls: true,
			retryOnFail: true,
			maxTries: 2,
			waitBetweenTries: 400,
		});
		expect(recipients(sandbox.requests).sort()).toEqual([
			'jane@customer.test',
			'joe@customer.test',
		]);
		expect(result.toolAnswers.filter((answer) => answer.thrown)).toHaveLength(1);
		expect(sandbox.state.emails).toHaveLength(2);
	});
});

describe('Retry of a failed execution, Stop Workflow, after item 6 of 10 failed', () => {
	const requested = () => recipients(sandbox.requests);

	test.each([
		['a 500', { status: 500 }, 5],
		['a dropped answer (the email was queued)', { action: /** @type {const} */ ('drop') }, 6],
	])(
		'Send Email: after %s, Retry sends emails 7-10, never 1-5 again, and not email 6: the run still fails on it',
		async (_, fault, queuedBefore) => {
			sandbox.injectFaults([...FIVE_PASS, fault]);
			const failed = await runNode(sandbox, {
				// One at a time, so no email is in flight beside the failure.
				parameters: sendParameters({ options: { concurrency: 1 } }),
				items: contacts(10),
			});
			expect(failed.error).toBeDefined();
			expect(requested()).toEqual(emailsOf(range(0, 6)));
			expect(sandbox.state.emails).toHaveLength(queuedBefore);

			const retried = await failed.retryExecution();
			expect(requested()).toEqual(emailsOf([...range(0, 6), ...range(6, 10)]));
			expect(sandbox.state.emails).toHaveLength(queuedBefore + 4);
			// The unknown email fails the run again, and the run says what this Retry did.
			expect(retried.error).toBeDefined();
			expect(retried.error.description).toMatch(/not sent again/i);
			expect(retried.error.description).toMatch(/may have been queued/);
			expect(retried.error.description).toMatch(
				/Queued in this run \(item indexes\): 0, 1, 2, 3, 4, 6, 7, 8, 9\./,
			);
			expect(retried.nodeError.context?.itemIndex ?? retried.error.context?.itemIndex).toBe(5);

			// Another Retry sends nothing at all: every email is known.
			const again = await failed.retryExecution();
			expect(sandbox.requests).toHaveLength(10);
			expect(again.error.description).toMatch(/not sent again/i);
		},
	);

	test('Send Email: with Retry Send On Server Error on, Retry sends email 6 once more, then 7-10', async () => {
		sandbox.injectFaults([...FIVE_PASS, { status: 500 }]);
		const parameters = sendParameters({
			options: { concurrency: 1, retries: 0, retrySendOnServerError: true },
		});
		const failed = await runNode(sandbox, { parameters, items: contacts(10) });
		expect(failed.error).toBeDefined();
		const retried = await failed.retryExecution();
		expect(retried.error).toBeUndefined();
		expect(requested()).toEqual(emailsOf([...range(0, 6), ...range(5, 10)]));
		expect(sandbox.state.emails).toHaveLength(10);
	});

	test('Add Profiles to a new list: after batch 6 of 10 got no answer, the list is created once; the batch is sent once more (adding is repeatable), never a third time; 7-10 go out', async () => {
		const batches = () => sandbox.requests.map((request) => request.body.profiles[0].email);
		sandbox.injectFaults([...FIVE_PASS, { action: 'drop' }]);
		const failed = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 1, concurrency: 1, retries: 0 } }),
			items: contacts(10),
		});
		expect(failed.error).toBeDefined();
		expect(batches()).toEqual(emailsOf(range(0, 6)));

		// The first Retry tries batch 6 once more, and it fails again.
		sandbox.injectFaults([{ action: 'drop' }]);
		const first = await failed.retryExecution();
		expect(first.error).toBeDefined();
		expect(batches()).toEqual(emailsOf([...range(0, 6), 5]));

		// The second does not send it a third time, and adds 7-10.
		const second = await failed.retryExecution();
		expect(batches()).toEqual(emailsOf([...range(0, 6), 5, ...range(6, 10)]));
		expect(second.error.description).toMatch(/not sent again/i);
		expect(second.error.description).toMatch(
			/Added in this run \(item indexes\): 0, 1, 2, 3, 4, 6, 7, 8, 9\./,
		);
		const creating = sandbox.requests.filter((request) => request.body.listId === undefined);
		expect(creating).toHaveLength(1);
		const [list] = [...sandbox.state.lists.values()].filter((entry) => entry.name === 'Newsletter');
		expect([...list.profiles.keys()].sort()).toEqual(emailsOf(range(0, 10)).sort());
	});
});
