// @ts-check
'use strict';

/**
 * A run that meets a dead server gives up, a stopped execution stops the node's own loops and
 * leaves Skip Emails Already Sent telling the truth, and Add Profiles keeps input order.
 */

const {
	addProfilesParameters,
	closedBaseUrl,
	contacts,
	delay,
	expectEachInputExactlyOnce,
	pairedIndexes,
	runNode,
	savedWorkflow,
	sendParameters,
	useSandbox,
} = require('../support');

/** The node's give-up threshold (GIVE_UP_AFTER in nodes/BasicsEngage/transport/index.ts). */
const GIVE_UP_AFTER = 5;

const sandbox = useSandbox({
	dailyLimit: 100_000,
	lists: [{ listId: 'lst_sync', name: 'Sync' }],
});

/** Every request answered with this fault. @param {Record<string, unknown>} fault */
const everyRequest = (fault) =>
	sandbox.setOptions({ faultRate: 1, randomFaults: [/** @type {any} */ (fault)] });

describe('a dead server: the run gives up after failures in a row', () => {
	// A Timeout short only where the server hangs: a loaded machine may answer a 500 late.
	test.each([
		['answers 500 to everything', { status: 500 }, 'server_error', 10_000],
		['accepts and never answers (timeout)', { action: 'hang' }, 'network_error', 200],
	])(
		`Send Email, a server that %s: ${GIVE_UP_AFTER} requests, the rest fail as not sent, safe to retry`,
		async (_, fault, kind, timeout) => {
			everyRequest(fault);
			const result = await runNode(sandbox, {
				parameters: sendParameters({
					options: { concurrency: 1, retries: 0 },
					requestOptions: { timeout },
				}),
				items: contacts(50),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(GIVE_UP_AFTER);
			expectEachInputExactlyOnce(result, 50);
			const notSent = result.errors.slice(GIVE_UP_AFTER);
			expect(notSent).toHaveLength(50 - GIVE_UP_AFTER);
			for (const item of result.errors) expect(item.json.details.kind).toBe(kind);
			expect(notSent[0].json.error).toBe(
				`Not sent: ${GIVE_UP_AFTER} requests in a row failed, so the run stopped sending`,
			);
			expect(notSent[0].json.details.description).toMatch(/was not sent, so it can be sent again/);
		},
	);

	test('a Base URL where nothing listens: network_error, given up after 5 (each retried)', async () => {
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { concurrency: 1, retries: 1, retryWait: 1 } }),
			items: contacts(20),
			baseUrl: await closedBaseUrl(),
			onError: 'continueErrorOutput',
		});
		expect(result.errors).toHaveLength(20);
		expect(result.errors.map((item) => item.json.details.kind)).toEqual(
			Array(20).fill('network_error'),
		);
		expect(result.errors[GIVE_UP_AFTER].json.error).toMatch(/in a row failed/);
	});

	// prettier-ignore
	test.each([
		['Send Email at Concurrency 5', sendParameters({ options: { concurrency: 5, retries: 0 } }), 200],
		['Add Profiles at the default Concurrency', addProfilesParameters({ listMode: 'existing', listId: 'lst_sync', options: { retries: 0 } }), 2000],
	])('%s launches nothing after the run gave up', async (_, parameters, count) => {
		everyRequest({ status: 500 });
		const result = await runNode(sandbox, {
			parameters,
			items: contacts(count),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests.length).toBeGreaterThanOrEqual(GIVE_UP_AFTER);
		expect(sandbox.requests.length).toBeLessThanOrEqual(GIVE_UP_AFTER + 4);
		expectEachInputExactlyOnce(result, count);
		expect(result.errors.at(-1)?.json.error).toMatch(/in a row failed/);
	});

	test('Add Profiles, 2,000 profiles against a 500 everywhere: 5 batches tried, not 20', async () => {
		everyRequest({ status: 500 });
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_sync',
				options: { retries: 2, retryWait: 1, concurrency: 1 },
			}),
			items: contacts(2000),
			onError: 'continueErrorOutput',
		});
		// Adding profiles is retried on a 5xx: three tries for each of five batches.
		expect(sandbox.requests).toHaveLength(GIVE_UP_AFTER * 3);
		expectEachInputExactlyOnce(result, 2000);
		expect(result.errors[GIVE_UP_AFTER * 100].json).toMatchObject({
			error: expect.stringMatching(/in a row failed/),
			details: { kind: 'server_error', description: expect.stringMatching(/can be sent again/) },
		});
	});

	test('a server that fails now and then is served to the end: a success resets the count', async () => {
		// Four 500s and one normal answer, ten times over: never five failures in a row.
		const round = [
			...Array(GIVE_UP_AFTER - 1).fill({ status: 500 }),
			{ action: 'delay', delayMs: 0 },
		];
		sandbox.injectFaults(Array(10).fill(round).flat());
		const result = await runNode(sandbox, {
			parameters: sendParameters({ options: { concurrency: 1, retries: 0 } }),
			items: contacts(100),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(100);
		expect(result.errors).toHaveLength(40);
		expect(result.success).toHaveLength(60);
	});
});

describe('a stopped execution', () => {
	const skipping = (/** @type {Record<string, unknown>} */ options = {}) =>
		sendParameters({ options: { ...options, skipAlreadySent: { settings: {} } } });

	test('Stop after 15 of 200 emails: the next run sends the rest, skips only what was accepted, and nothing twice', async () => {
		sandbox.setOptions({ latencyMs: 15 });
		const workflow = savedWorkflow();
		const items = contacts(200);
		await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items,
			stopWhen: () => sandbox.state.emails.length >= 15,
		});
		await delay(300);
		const requestedInFirstRun = sandbox.requests.length;
		// Only the requests already in flight at the Stop (concurrency 5) went out after it.
		expect(requestedInFirstRun).toBeLessThanOrEqual(15 + 5);
		await delay(300);
		expect(sandbox.requests).toHaveLength(requestedInFirstRun);

		const queuedInFirstRun = sandbox.state.emails.length;
		sandbox.setOptions({ latencyMs: 0 });
		const again = await runNode(sandbox, {
			...workflow,
			parameters: skipping(),
			items,
			onError: 'continueErrorOutput',
		});
		expectEachInputExactlyOnce(again, 200);
		const skipped = again.success.filter((item) => item.json.skipped);
		// Skipped: emails BasicsEngage accepted and the first run heard back about; no more.
		expect(skipped.length).toBeGreaterThanOrEqual(queuedInFirstRun - 5);
		expect(skipped.length).toBeLessThanOrEqual(queuedInFirstRun);
		for (const item of skipped) expect(item.json.reason).toMatch(/sent before/);
		// Unknown: requests the Stop cut off, at most the 5 in flight; never called "sent before".
		expect(again.errors.length).toBeLessThanOrEqual(5);
		for (const item of again.errors) expect(item.json.details.kind).toBe('outcome_unknown');
		// Every email reached BasicsEngage once, except a cut-off one it never got.
		const queued = sandbox.state.emails.map((email) => email.to);
		expect(new Set(queued).size).toBe(queued.length);
		const unknown = new Set(again.errors.map((item) => items[pairedIndexes(item)[0]].email));
		for (const { email } of items) expect(queued.includes(email) || unknown.has(email)).toBe(true);
		expect(queued.length).toBeGreaterThanOrEqual(200 - unknown.size);
	});

	test.each([
		[
			'a retry wait ends Send Email at once, with no further request',
			sendParameters({
				options: { concurrency: 1, retries: 3, retryWait: 1500, retrySendOnServerError: true },
			}),
			[{ status: 500 }],
		],
		[
			'Request Options batching ends Add Profiles at once, with no further batch',
			addProfilesParameters({
				listMode: 'existing',
				listId: 'lst_sync',
				options: { batchSize: 1 },
				requestOptions: { batching: { batch: { batchSize: 1, batchInterval: 1500 } } },
			}),
			[],
		],
	])('a Stop during %s', async (_, parameters, faults) => {
		sandbox.injectFaults(/** @type {any} */ (faults));
		const started = Date.now();
		await runNode(sandbox, {
			parameters,
			items: contacts(3),
			stopWhen: () => sandbox.requests.length >= 1,
		});
		expect(Date.now() - started).toBeLessThan(1500);
		// Past the 1.5 s wait: a loop still running would have sent again by now.
		await delay(2000);
		expect(sandbox.requests).toHaveLength(1);
	});
});

test('Add Profiles under On Error = Continue keeps input order (an invalid item stays in place)', async () => {
	const items = [...contacts(2), { email: 'not-an-address' }, ...contacts(1, 3)];
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_sync',
			options: { batchSize: 2 },
		}),
		items,
		onError: 'continueRegularOutput',
	});
	expect(result.success.map(pairedIndexes)).toEqual([[0, 1], [2], [3]]);
	expect(result.success[1].json.details.kind).toBe('invalid_input');
});
