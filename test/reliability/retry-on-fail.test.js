// @ts-check
'use strict';

/**
 * n8n's node setting "Retry On Fail" runs the whole node again, with the same input, after it
 * throws, and also when its first output item carries `json.error`, in every On Error mode
 * (n8n-core's workflow-execute). The node remembers in its per-execution context what each
 * request did, so such a retry never sends an email twice and never creates a second list:
 * what was done is answered again as it was, and only what was not tried is sent. Any fault
 * (a 429, a lost answer, ...) under Retry On Fail in any On Error mode sends nothing twice and
 * loses no item: the properties of test/reliability/model.test.js, on every history.
 */

const {
	addProfilesParameters,
	contacts,
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const SPRING = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const AUTUMN = 'bbbbbbbbbbbbbbbbbbbbbbbb';

const sandbox = useSandbox({ dailyLimit: 1000 });

// n8n reads a wait of 0 as its default of 1000 ms; 1 ms keeps the tries back to back.
const retryOnFail = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 };
/** Lets a request through untouched, so the next scripted fault hits a later request. */
const pass = { action: /** @type {const} */ ('delay'), delayMs: 0 };
const MODES = /** @type {const} */ ([
	'stopWorkflow',
	'continueRegularOutput',
	'continueErrorOutput',
]);

/** @param {any[]} requests */
const recipients = (requests) => requests.map((request) => request.body.to);

/** Every email queued at most once, whatever n8n re-ran. */
function expectNoEmailTwice() {
	const queued = sandbox.state.emails.map((email) => email.to);
	expect(new Set(queued).size).toBe(queued.length);
}

describe('Send Email under Retry On Fail (max tries 3)', () => {
	test('Stop: a 500 on the 6th of 10 emails sends each of the first five once, never retries the 6th; the next try sends 7-10', async () => {
		sandbox.injectFaults([pass, pass, pass, pass, pass, { status: 500 }]);
		const result = await runNode(sandbox, {
			// One at a time, so no email is in flight beside the failure.
			parameters: sendParameters({ options: { concurrency: 1 } }),
			items: contacts(10),
			...retryOnFail,
		});
		// Every try fails on the unknown 6th; the second sends what the first never attempted.
		expect(result.error).toBeDefined();
		expect(recipients(sandbox.requests)).toEqual(contacts(10).map((contact) => contact.email));
		expect(sandbox.state.emails).toHaveLength(9);
		expect(result.error.description).toMatch(/may have been queued/);
		expectNoEmailTwice();
	});

	test.each(['continueRegularOutput', 'continueErrorOutput'])(
		'%s: a 500 on the first email makes n8n retry; the nine sent emails are answered again, not resent',
		async (onError) => {
			sandbox.injectFaults([{ status: 500 }]);
			const result = await runNode(sandbox, {
				parameters: sendParameters(),
				items: contacts(10),
				onError: /** @type {any} */ (onError),
				...retryOnFail,
			});
			// Try 1 sends all ten; tries 2 and 3 send nothing.
			expect(sandbox.requests).toHaveLength(10);
			expect(sandbox.state.emails).toHaveLength(9);
			expectEachInputExactlyOnce(result, 10);
			const failed = [...result.success, ...result.errors].filter((item) => item.json.error);
			expect(failed).toHaveLength(1);
			expect(failed[0].json.details.kind).toBe('server_error');
			// The replayed successes keep their messageIds and pairing.
			const sent = [...result.success, ...result.errors].filter((item) => item.json.messageId);
			expect(sent.map((item) => item.json.messageId).sort()).toEqual(
				sandbox.state.emails.map((email) => email.messageId).sort(),
			);
		},
	);

	test('Retry Send On Server Error allows the unknown email exactly one more attempt across n8n tries', async () => {
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

	test('as an AI tool: n8n retries the call with a new run index; the same request is not sent again', async () => {
		sandbox.injectFaults([{ status: 502 }, { status: 502 }, { status: 502 }]);
		const result = await runNode(sandbox, {
			parameters: sendParameters({ to: "={{ $fromAI('to', 'recipient', 'string') }}" }),
			toolCalls: [{ to: 'jane@customer.test' }],
			...retryOnFail,
		});
		expect(result.toolAnswers[0].thrown).toMatch(/may have been queued/);
		expect(sandbox.requests).toHaveLength(1);
	});

	test('as an AI tool, two calls at once: the one that succeeds forgets only its own record, so the retry of the other, whose answer was lost, does not send its email again', async () => {
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
		expectNoEmailTwice();
	});

	test('a run that succeeds forgets what it did: a later, separate run sends again', async () => {
		const first = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(2),
			...retryOnFail,
		});
		const second = await runNode(sandbox, {
			parameters: sendParameters(),
			items: contacts(2),
			...retryOnFail,
		});
		expect(first.success).toHaveLength(2);
		expect(second.success).toHaveLength(2);
		expect(sandbox.state.emails).toHaveLength(4);
	});
});

describe('Add Profiles under Retry On Fail (max tries 3)', () => {
	test.each(MODES)(
		'%s: a 401 on the third batch of Create New List creates one list, sends no batch twice',
		async (onError) => {
			sandbox.injectFaults([pass, pass, { path: '/list/addProfiles', status: 401 }]);
			const result = await runNode(sandbox, {
				parameters: addProfilesParameters({ options: { batchSize: 2 } }),
				items: contacts(8),
				onError,
				...retryOnFail,
			});
			expect(sandbox.state.lists.size).toBe(1);
			const creating = sandbox.requests.filter((request) => request.body.listId === undefined);
			expect(creating).toHaveLength(1);
			const batches = sandbox.requests.map((request) => request.body.profiles[0].email);
			// Batches 1 and 2 once each; batch 3 once per try (a refusal did nothing); batch 4 only when not stopped.
			expect(batches.filter((email) => email === 'contact0@customer.test')).toHaveLength(1);
			expect(batches.filter((email) => email === 'contact2@customer.test')).toHaveLength(1);
			if (onError !== 'stopWorkflow') expectEachInputExactlyOnce(result, 8);
		},
	);

	test('Create New List whose creating request got no answer is never created again by a retry', async () => {
		sandbox.injectFaults([{ action: 'drop' }]);
		const result = await runNode(sandbox, {
			parameters: addProfilesParameters({ options: { batchSize: 2 } }),
			items: contacts(4),
			onError: 'continueErrorOutput',
			...retryOnFail,
		});
		expect(sandbox.state.lists.size).toBe(1);
		expect(sandbox.requests).toHaveLength(1);
		expectEachInputExactlyOnce(result, 4);
	});
});

/**
 * The campaign tests' own sandbox, with lists and campaigns seeded (the tests above count the
 * lists of an empty account): the `sandbox` of the describe block that calls it.
 */
const useCampaignSandbox = () =>
	useSandbox({
		lists: [
			{ listId: 'list_spring', profiles: [{ email: 'ann@customer.test' }] },
			{ listId: 'list_autumn', profiles: [{ email: 'bob@customer.test' }] },
		],
		campaigns: [
			{ _id: SPRING, name: 'Spring', subject: 'Hi', recepientList: ['list_spring'] },
			{ _id: AUTUMN, name: 'Autumn', subject: 'Hi', recepientList: ['list_autumn'] },
		],
	});

describe('Send Campaign under Retry On Fail (max tries 3): never a second send', () => {
	const sandbox = useCampaignSandbox();
	const sentCampaigns = () => sandbox.state.campaignSends.map((send) => send.campaignId);

	test.each(MODES)(
		'%s: a 500 on the first send is never sent again; under Continue the second is sent once',
		async (onError) => {
			sandbox.injectFaults([{ path: '/campaign/send', status: 500 }]);
			const result = await runNode(sandbox, {
				parameters: sendCampaignParameters({ options: { retries: 5, retryWait: 0 } }),
				items: [{ campaignId: SPRING }, { campaignId: AUTUMN }],
				onError,
				...retryOnFail,
			});
			const sendRequests = sandbox
				.requestsTo('/campaign/send')
				.map((request) => request.body.campaignId);
			// Stop ends try 1 at the unknown send and try 2 sends the other campaign; Continue
			// sends it in try 1.
			expect(sendRequests).toEqual([SPRING, AUTUMN]);
			expect(sentCampaigns()).toEqual([AUTUMN]);
			if (onError === 'stopWorkflow') {
				expect(result.error.message).toMatch(/may have started sending/);
			} else {
				expectEachInputExactlyOnce(result, 2);
				const failed = [...result.success, ...result.errors].find((item) => item.json.error);
				expect(failed?.json.error).toMatch(/may have started sending/);
			}
		},
	);

	test.each(MODES)(
		"%s: a refusal (400) did nothing, so n8n's retry sends it; sends already done are not repeated",
		async (onError) => {
			sandbox.injectFaults([
				{ path: '/campaign/send', status: 400, body: { status: 'error', error: 'Busy' } },
			]);
			const result = await runNode(sandbox, {
				parameters: sendCampaignParameters(),
				items: [{ campaignId: SPRING }, { campaignId: AUTUMN }],
				onError,
				...retryOnFail,
			});
			expect(result.error).toBeUndefined();
			expect(sentCampaigns().sort()).toEqual([SPRING, AUTUMN].sort());
			expectEachInputExactlyOnce(result, 2);
		},
	);

	test('as an AI tool: n8n retries the call with a new run index; the campaign is not sent again', async () => {
		sandbox.injectFaults([{ status: 502 }, { status: 502 }, { status: 502 }]);
		const result = await runNode(sandbox, {
			parameters: sendCampaignParameters({
				campaignId: "={{ $fromAI('campaignId', 'ID of the campaign', 'string') }}",
			}),
			toolCalls: [{ campaignId: SPRING }],
			...retryOnFail,
		});
		expect(result.toolAnswers[0].thrown).toMatch(/may have started sending/);
		expect(sandbox.requests).toHaveLength(1);
	});
});

describe('Create List and Create Campaign under Retry On Fail (max tries 3)', () => {
	const sandbox = useCampaignSandbox();

	test.each(MODES)(
		"%s: Create List: a 400 on the first item is sent again by n8n's retry; the other lists are created once",
		async (onError) => {
			sandbox.injectFaults([
				{ path: '/list/create', status: 400, body: { status: 'error', error: 'Busy' } },
			]);
			const result = await runNode(sandbox, {
				parameters: createListParameters({ listName: '=Segment {{ $itemIndex }}' }),
				items: [{}, {}, {}],
				onError,
				...retryOnFail,
			});
			expect(result.error).toBeUndefined();
			const created = [...sandbox.state.lists.values()].map((list) => list.name).filter(Boolean);
			expect(created.sort()).toEqual(['Segment 0', 'Segment 1', 'Segment 2']);
			expectEachInputExactlyOnce(result, 3);
		},
	);

	test.each(MODES)(
		'%s: Create List whose request got no answer (dropped) is never created again',
		async (onError) => {
			sandbox.injectFaults([{ path: '/list/create', action: 'drop' }]);
			const result = await runNode(sandbox, {
				parameters: createListParameters(),
				items: [{}, {}],
				onError,
				...retryOnFail,
			});
			const created = [...sandbox.state.lists.values()].filter((list) => list.name);
			// The second list is created once: by try 2 under Stop, by try 1 under Continue.
			expect(created).toHaveLength(2);
			expect(sandbox.requestsTo('/list/create')).toHaveLength(2);
			if (onError !== 'stopWorkflow') expectEachInputExactlyOnce(result, 2);
		},
	);

	test.each(MODES)(
		'%s: Create Campaign: a 500 on the first item; no campaign is created twice',
		async (onError) => {
			sandbox.injectFaults([{ path: '/campaign/create', status: 500 }]);
			const result = await runNode(sandbox, {
				parameters: createCampaignParameters({
					campaignName: '=Campaign {{ $itemIndex }}',
					recipientListIds: 'list_spring',
				}),
				items: [{}, {}, {}],
				onError,
				...retryOnFail,
			});
			const names = sandbox.requestsTo('/campaign/create').map((request) => request.body.name);
			expect(new Set(names).size).toBe(names.length);
			expect(names).toEqual(['Campaign 0', 'Campaign 1', 'Campaign 2']);
			if (onError !== 'stopWorkflow') {
				expectEachInputExactlyOnce(result, 3);
				expect(
					result.success.concat(result.errors).filter((item) => item.json.campaignId),
				).toHaveLength(2);
			}
		},
	);
});
