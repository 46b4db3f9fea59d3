// @ts-check
'use strict';

/**
 * Retry in n8n's Executions list runs a failed execution on from the node that failed, with the
 * node context of the failed execution (test/harness: `retryExecution`, as n8n's
 * ExecutionService.retry does it). Pressing it sends what the failed execution never attempted,
 * never again what it did, and never unasked what may have taken effect: that item stays
 * reported as outcome unknown, and the run fails again saying so.
 */

const {
	addProfilesParameters,
	contacts,
	runNode,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ dailyLimit: 1000 });

/** Lets a request through untouched, so the next scripted fault hits a later request. */
const pass = { action: /** @type {const} */ ('delay'), delayMs: 0 };
const FIVE_PASS = [pass, pass, pass, pass, pass];
const emailsOf = (/** @type {number[]} */ indexes) =>
	indexes.map((index) => `contact${index}@customer.test`);
const range = (/** @type {number} */ from, /** @type {number} */ to) =>
	Array.from({ length: to - from }, (_, offset) => from + offset);

describe('Send Email, Stop Workflow: Retry after email 6 of 10 failed', () => {
	/** The recipient of each request the sandbox got, in order. */
	const requested = () => sandbox.requests.map((request) => request.body.to);

	test.each([
		['a 500', { status: 500 }, 5],
		['a dropped answer (the email was queued)', { action: /** @type {const} */ ('drop') }, 6],
	])(
		'after %s, Retry sends emails 7-10, never 1-5 again, and not email 6: the run still fails on it',
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

	test('with Retry Send On Server Error on, Retry sends email 6 once more, then 7-10', async () => {
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
});

test('Add Profiles to a new list, Stop Workflow: after batch 6 of 10 got no answer, the list is created once; the batch is sent once more (adding is repeatable), never a third time; 7-10 go out', async () => {
	const requested = () => sandbox.requests.map((request) => request.body.profiles[0].email);
	sandbox.injectFaults([...FIVE_PASS, { action: 'drop' }]);
	const failed = await runNode(sandbox, {
		parameters: addProfilesParameters({ options: { batchSize: 1, concurrency: 1, retries: 0 } }),
		items: contacts(10),
	});
	expect(failed.error).toBeDefined();
	expect(requested()).toEqual(emailsOf(range(0, 6)));

	// The first Retry tries batch 6 once more, and it fails again.
	sandbox.injectFaults([{ action: 'drop' }]);
	const first = await failed.retryExecution();
	expect(first.error).toBeDefined();
	expect(requested()).toEqual(emailsOf([...range(0, 6), 5]));

	// The second does not send it a third time, and adds 7-10.
	const second = await failed.retryExecution();
	expect(requested()).toEqual(emailsOf([...range(0, 6), 5, ...range(6, 10)]));
	expect(second.error.description).toMatch(/not sent again/i);
	expect(second.error.description).toMatch(
		/Added in this run \(item indexes\): 0, 1, 2, 3, 4, 6, 7, 8, 9\./,
	);
	const creating = sandbox.requests.filter((request) => request.body.listId === undefined);
	expect(creating).toHaveLength(1);
	const [list] = [...sandbox.state.lists.values()].filter((entry) => entry.name === 'Newsletter');
	expect([...list.profiles.keys()].sort()).toEqual(emailsOf(range(0, 10)).sort());
});
