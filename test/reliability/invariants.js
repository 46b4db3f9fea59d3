// @ts-check
'use strict';

/**
 * Nothing lost, nothing sent twice: 2,000-item runs under mixes of faults, in both
 * "On Error: Continue" modes. Every input item reaches exactly one output item (success or
 * error), no item is requested more often than the retry policy allows, and the counts add up.
 * Stop Workflow names the failed item and starts nothing after it: test/node/operations.test.js
 * (per operation) and test/node/add-profiles.test.js (beside requests in flight).
 */

const {
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	pairedIndexes,
	runNode,
	sendParameters,
	useSandbox,
} = require('../support');

// `npm run soak` raises the count. The seeded faults fall on the same request numbers at any
// count: 2,000 items meet each fault of a mix a dozen times or more; Add Profiles keeps 100 batches.
const ITEM_COUNT = Number(process.env.BASICSENGAGE_SOAK_ITEMS) || 2_000;
const BATCH_SIZE = Math.min(100, ITEM_COUNT / 100);
// A 10,000-email run takes about 15 s on this machine's 2 cores; leave room for a loaded CI, and
// for `npm run soak`'s 100,000 (its runs passed 180 s).
jest.setTimeout(Math.max(180_000, ITEM_COUNT * 10));
const RETRIES = 2;
const SEND_OPTIONS = { concurrency: 5, retries: RETRIES, retryWait: 1 };
const KINDS = ['server_error', 'network_error', 'unexpected_response'];

/** @satisfies {Record<string, import('../sandbox/server').Fault[]>} */
const FAULT_MIXES = {
	'server errors and non-JSON answers': [
		{ status: 500 },
		{ status: 502 },
		{
			status: 503,
			body: '<html><body>Service Unavailable</body></html>',
			headers: { 'content-type': 'text/html' },
		},
		{ status: 200, body: 'OK but not JSON' },
	],
	'resets, dropped answers, hangs past the timeout and slow answers': [
		{ action: 'reset' },
		{ action: 'drop' },
		{ action: 'hang' },
		{ action: 'delay', delayMs: 40 },
	],
};

// Required from a test file, so these hooks belong to that file.
const sandbox = useSandbox({
	dailyLimit: 1_000_000,
	lists: [{ listId: 'lst_sync', name: 'Sync' }],
});

/**
 * The Timeout of each mix: short where requests hang on purpose, so a run ends in seconds; long
 * where none does, so that a loaded machine adds no timeouts of its own to the mix.
 */
const REQUEST_OPTIONS = {
	'server errors and non-JSON answers': { timeout: 10_000 },
	'resets, dropped answers, hangs past the timeout and slow answers': { timeout: 150 },
};

/**
 * Each test's own recipients: under load a timed-out request can reach the sandbox after its
 * test ended (seen: 10 s later), and must not count as a request of the next test.
 */
let testsSoFar = 0;
const ownContacts = () => contacts(ITEM_COUNT, ITEM_COUNT * testsSoFar++);

/**
 * How many requests the sandbox got per key (recipient, profile email), for this test's contacts.
 * @param {(body: any) => string[]} keysOf @param {Array<{ email: string }>} own
 */
function countPerKey(keysOf, own) {
	const emails = new Set(own.map((contact) => contact.email));
	/** @type {Map<string, number>} */
	const counts = new Map();
	for (const request of sandbox.requests) {
		for (const key of keysOf(request.body)) {
			if (emails.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
		}
	}
	return counts;
}

/** Success and error items, whichever output n8n put them on. */
function splitOutcomes(/** @type {{ success: any[], errors: any[] }} */ result) {
	const all = [...result.success, ...result.errors];
	return {
		sent: all.filter((item) => !('error' in item.json)),
		failed: all.filter((item) => 'error' in item.json),
	};
}

const MODES = /** @type {const} */ (['continueErrorOutput', 'continueRegularOutput']);

/**
 * Runs `parameters` (with the mix's Timeout) on this test's own contacts under the fault mix,
 * drawn at `rate` from `seed`: every input item comes out exactly once, as sent or failed.
 * @param {keyof typeof FAULT_MIXES} mixName @param {[rate: number, seed: number]} draw
 * @param {Record<string, unknown>} parameters @param {typeof MODES[number]} onError
 */
async function runUnderMix(mixName, [faultRate, faultSeed], parameters, onError) {
	sandbox.setOptions({ faultRate, faultSeed, randomFaults: FAULT_MIXES[mixName] });
	const items = ownContacts();
	const requestOptions = REQUEST_OPTIONS[mixName];
	const result = await runNode(sandbox, {
		parameters: { ...parameters, requestOptions },
		items,
		onError,
	});
	expectEachInputExactlyOnce(result, ITEM_COUNT);
	return { items, result, ...splitOutcomes(result) };
}

/**
 * A failed item whose request never showed up (none for its email in `requested`): every attempt
 * timed out before the sandbox read it, or the run stopped sending (five failures in a row)
 * before its turn. @param {any[]} failed @param {Array<{ email: string }>} items @param {Map<string, number>} requested
 */
function expectUnrequestedTimedOutOrNotSent(failed, items, requested) {
	for (const item of failed) {
		if (requested.has(items[pairedIndexes(item)[0]].email)) continue;
		if (!item.json.error.startsWith('Not sent:'))
			expect(item.json.details.kind).toBe('network_error');
	}
}

/**
 * Registers the invariant tests for one fault mix (one test file per mix, so jest can run the
 * mixes in parallel).
 * @param {keyof typeof FAULT_MIXES} mixName
 */
function describeInvariants(mixName) {
	describe(`under ${mixName}`, () => {
		test.each(MODES)(
			`Send Email, ${ITEM_COUNT} items, %s: each item once, each email requested once`,
			async (onError) => {
				const parameters = sendParameters({ options: SEND_OPTIONS });
				const run = await runUnderMix(mixName, [0.03, 11], parameters, onError);
				const { items, result, sent, failed } = run;
				expect(result.error).toBeUndefined();
				expect(sent.length + failed.length).toBe(ITEM_COUNT);
				expect(failed.length).toBeGreaterThan(0);
				for (const item of failed) expect(KINDS).toContain(item.json.details.kind);

				// Without "Retry Send On Server Error" no email is requested twice, whatever the fault.
				const requestsPerRecipient = countPerKey((body) => [body.to], items);
				expect(Math.max(0, ...requestsPerRecipient.values())).toBeLessThanOrEqual(1);
				expectUnrequestedTimedOutOrNotSent(failed, items, requestsPerRecipient);
				expect(requestsPerRecipient.size).toBeGreaterThanOrEqual(sent.length);

				// Every reported success is an email the API queued, for that item's recipient.
				const queued = new Map(sandbox.state.emails.map((email) => [email.messageId, email.to]));
				for (const item of sent) {
					expect(queued.get(item.json.messageId)).toBe(items[pairedIndexes(item)[0]].email);
				}
				// An email queued but reported failed can only be one whose answer was lost on the
				// way back (reset, drop, timeout): the item says network_error, "may have reached".
				const queuedRecipients = new Set(sandbox.state.emails.map((email) => email.to));
				for (const item of failed) {
					if (queuedRecipients.has(items[pairedIndexes(item)[0]].email)) {
						expect(item.json.details.kind).toBe('network_error');
						expect(item.json.details.description).toMatch(/may have reached/);
					}
				}
			},
		);

		test(`Send Email with "Retry Send On Server Error", ${ITEM_COUNT} items: at most ${1 + RETRIES} requests per email`, async () => {
			const options = { ...SEND_OPTIONS, retrySendOnServerError: true };
			const parameters = sendParameters({ options });
			const { items, result } = await runUnderMix(mixName, [0.03, 23], parameters, MODES[0]);
			const requestsPerRecipient = countPerKey((body) => [body.to], items);
			expect(Math.max(...requestsPerRecipient.values())).toBeLessThanOrEqual(1 + RETRIES);
			expect(Math.max(...requestsPerRecipient.values())).toBeGreaterThan(1);
			// Retries recover most faults; a 200 that breaks the contract is never sent again. (Under
			// load, the machine's own timeouts can make five requests in a row fail: the run then
			// stops sending, and the rest say "Not sent".)
			const unrecovered = result.errors.filter(
				(item) => !item.json.error.startsWith('Not sent:') && item.json.details.httpCode !== 200,
			);
			expect(unrecovered.length).toBeLessThan(ITEM_COUNT * 0.01);
		});

		test.each(MODES)(
			`Add Profiles, ${ITEM_COUNT} items in batches of ${BATCH_SIZE}, %s: each item once, each profile at most ${1 + RETRIES} times`,
			async (onError) => {
				const parameters = addProfilesParameters({
					listMode: 'existing',
					listId: 'lst_sync',
					options: { batchSize: BATCH_SIZE, retries: RETRIES, retryWait: 1 },
				});
				const run = await runUnderMix(mixName, [0.1, 5], parameters, onError);
				const { items, result, sent, failed } = run;
				expect(result.error).toBeUndefined();
				const requestsPerProfile = countPerKey(
					// A late request of the test before (an email) has no profiles.
					(body) => (body.profiles ?? []).map((/** @type {any} */ p) => p.email),
					items,
				);
				expect(Math.max(...requestsPerProfile.values())).toBeLessThanOrEqual(1 + RETRIES);
				expectUnrequestedTimedOutOrNotSent(failed, items, requestsPerProfile);
				const submitted = sent.reduce((sum, item) => sum + item.json.submittedCount, 0);
				expect(submitted + failed.length).toBe(ITEM_COUNT);
				expect(sandbox.state.lists.get('lst_sync')?.profiles.size).toBeGreaterThanOrEqual(
					submitted,
				);
			},
		);
	});
}

module.exports = { describeInvariants };
