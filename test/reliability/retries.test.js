// @ts-check
'use strict';

/**
 * The retry policy: Add Profiles retries 5xx, resets and timeouts; Send retries only what
 * provably never reached the server unless "Retry Send On Server Error" is on; 400, 401 and
 * 429 are never retried; Retry-After is honoured.
 */

const {
	addProfilesParameters,
	contacts,
	delay,
	freePort,
	loopbackBaseUrl,
	runNode,
	sendParameters,
	startSandbox,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ lists: [{ listId: 'lst_existing', name: 'Existing' }] });

const FAST = { retryWait: 10 };
const send = (/** @type {Record<string, unknown>} */ options = {}) =>
	sendParameters({ options: { ...FAST, ...options } });
const addToExisting = (/** @type {Record<string, unknown>} */ options = {}) =>
	addProfilesParameters({
		listMode: 'existing',
		listId: 'lst_existing',
		options: { ...FAST, ...options },
	});

/** @param {import('../support').RunResult} result */
const kinds = (result) => result.errors.map((item) => item.json.details.kind);

describe('Send Email', () => {
	test('a refused connection is retried: the request provably never arrived', async () => {
		const port = await freePort();
		const late = startSandbox({ port }).catch(() => undefined);
		// The first attempt hits a closed port; the sandbox listens before the retry.
		const [result, lateSandbox] = await Promise.all([
			runNode(sandbox, {
				parameters: send({ retryWait: 400 }),
				items: contacts(1),
				baseUrl: loopbackBaseUrl(port),
			}),
			delay(100).then(() => late),
		]);
		try {
			expect(result.error).toBeUndefined();
			expect(result.success[0].json.messageId).toEqual(expect.any(String));
			expect(lateSandbox?.requests).toHaveLength(1);
		} finally {
			await lateSandbox?.close();
		}
	});

	test('"Retry Send On Server Error" retries 5xx, resets and timeouts', async () => {
		sandbox.injectFaults([
			{ path: '/email/send', status: 500 },
			{ path: '/email/send', action: 'reset' },
		]);
		const result = await runNode(sandbox, {
			parameters: send({ retrySendOnServerError: true }),
			items: contacts(1),
		});
		expect(result.error).toBeUndefined();
		expect(sandbox.requests).toHaveLength(3);
		expect(sandbox.state.emails).toHaveLength(1);
	});

	test('"Retry Send On Server Error" can send an email twice after a dropped answer (the documented trade-off)', async () => {
		sandbox.injectFaults([{ path: '/email/send', action: 'drop' }]);
		const result = await runNode(sandbox, {
			parameters: send({ retrySendOnServerError: true }),
			items: contacts(1),
		});
		expect(result.success).toHaveLength(1);
		expect(sandbox.state.emails).toHaveLength(2);
	});

	test.each([
		[3, 4],
		[0, 1],
	])(
		'Retries %i: %i requests at most, then the item fails as server_error',
		async (retries, count) => {
			sandbox.injectFaults(Array(5).fill({ path: '/email/send', status: 502 }));
			const result = await runNode(sandbox, {
				parameters: send({ retrySendOnServerError: true, retries }),
				items: contacts(1),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(count);
			expect(kinds(result)).toEqual(['server_error']);
		},
	);

	test('Retry-After is honoured before the retry', async () => {
		sandbox.injectFaults([{ path: '/email/send', status: 503, headers: { 'Retry-After': '1' } }]);
		const result = await runNode(sandbox, {
			parameters: send({ retrySendOnServerError: true }),
			items: contacts(1),
		});
		expect(result.success).toHaveLength(1);
		const [first, second] = sandbox.requests.map((request) => Date.parse(request.receivedAt));
		expect(second - first).toBeGreaterThanOrEqual(990);
	});
});

describe('Add Profiles to List', () => {
	test.each([
		['a 5xx', { status: 500 }],
		['a reset', { action: 'reset' }],
		['a timeout', { action: 'hang' }],
	])('adding to a list retries %s', async (_label, fault) => {
		sandbox.injectFaults([{ path: '/list/addProfiles', ...fault }]);
		const result = await runNode(sandbox, {
			// the retry must answer within it too: 200 ms was too short on a loaded machine
			parameters: { ...addToExisting(), requestOptions: fault.action === 'hang' ? { timeout: 2000 } : {} },
			items: contacts(3),
		});
		expect(result.error).toBeUndefined();
		expect(sandbox.requests).toHaveLength(2);
		expect(result.success.map((item) => item.json.addedCount)).toEqual([3]);
	});

	test('a creating request that provably never arrived lets the next batch create the list', async () => {
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { ...FAST, batchSize: 2, retries: 0 } }),
			items: contacts(4),
			baseUrl: 'http://127.0.0.1:9/api/v0/dev',
			onError: 'continueErrorOutput',
		});
		// Nothing listens, so every batch tries (and fails) to create: no list can exist.
		expect(kinds(result)).toEqual(Array(4).fill('network_error'));
		expect(result.errors.every((item) => !/^Not sent/.test(item.json.error))).toBe(true);
	});
});
