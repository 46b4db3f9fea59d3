// @ts-check
'use strict';

/**
 * Validate Only (Send Nothing): every check, no request, and nothing remembered (neither Skip
 * Emails Already Sent's store nor the Retry On Fail memory). One dry run of each operation, its
 * output the request the real run sends: operations.test.js.
 */

const {
	API_KEY,
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	runNode,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ dailyLimit: 1000 });

const validateOnly = { validateOnly: true };

test('Add Profiles: one item per batch, paired to its items; later batches name the list the first creates', async () => {
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({ options: { batchSize: 2, ...validateOnly } }),
		items: contacts(5),
	});

	expect(sandbox.requests).toEqual([]);
	expect(sandbox.state.lists.size).toBe(0);
	const emails = (/** @type {number[]} */ indexes) =>
		indexes.map((index) => ({ email: `contact${index}@customer.test` }));
	expect(result.success.map((item) => item.json.request)).toEqual([
		{
			method: 'POST',
			path: '/list/addProfiles',
			body: { name: 'Newsletter', profiles: emails([0, 1]) },
		},
		{
			method: 'POST',
			path: '/list/addProfiles',
			body: { listId: '(the ID of the list the first request creates)', profiles: emails([2, 3]) },
		},
		{
			method: 'POST',
			path: '/list/addProfiles',
			body: { listId: '(the ID of the list the first request creates)', profiles: emails([4]) },
		},
	]);
	expect(result.success.map((item) => item.pairedItem)).toEqual([
		[{ item: 0 }, { item: 1 }],
		[{ item: 2 }, { item: 3 }],
		[{ item: 4 }],
	]);
});

test('every check still runs: a bad item gets its usual error item, the others their request; under Stop Workflow it ends the run', async () => {
	const parameters = sendParameters({ options: validateOnly });
	const items = [...contacts(1), { email: 'not-an-address' }, ...contacts(1, 2)];
	const result = await runNode(sandbox, { parameters, items, onError: 'continueErrorOutput' });
	expect(result.success.map((item) => item.json.request)).toMatchObject([
		{ body: { to: 'contact0@customer.test' } },
		{ body: { to: 'contact2@customer.test' } },
	]);
	expect(result.errors.map((item) => [item.json.details.kind, item.pairedItem])).toEqual([
		['invalid_input', { item: 1 }],
	]);
	expectEachInputExactlyOnce(result, 3);
	const stopped = await runNode(sandbox, { parameters, items });
	expect(stopped.error?.message).toMatch(/not a valid email address/);
	expect(sandbox.requests).toEqual([]);
});

test('every check still runs: a credential that cannot work fails every item, and nothing is sent', async () => {
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options: validateOnly }),
		items: contacts(2),
		apiKey: `Bearer ${API_KEY}`,
		onError: 'continueRegularOutput',
	});

	expect(sandbox.requests).toEqual([]);
	expect(result.success.map((item) => item.json.details?.kind)).toEqual([
		'invalid_input',
		'invalid_input',
	]);
});

test('the Retry On Fail memory ignores a dry run: nothing is kept in the node context', async () => {
	const result = await runNode(sandbox, {
		parameters: sendParameters({ options: validateOnly }),
		items: contacts(2),
		retryOnFail: true,
	});

	expect(result.success).toHaveLength(2);
	expect(JSON.stringify(result.run.data.executionData?.contextData ?? {})).not.toContain(
		'basicsEngageDone',
	);
});

describe('Validate Only set by an expression (a form, webhook or sheet switch)', () => {
	const TRUE = [true, 'true', ' TRUE ', 1, '1'];
	const UNCLEAR = ['yes', 'maybe', '', null, 2];
	const FALSE = [false, 'false', 0, '0'];
	/** Runs `parameters` with Validate Only read from each item's `dryRun`. */
	const run = (/** @type {any} */ parameters, /** @type {unknown[]} */ dryRuns) =>
		runNode(sandbox, {
			parameters: parameters({ options: { validateOnly: '={{ $json.dryRun }}' } }),
			items: dryRuns.map((dryRun, index) => ({
				...contacts(1, index)[0],
				campaignId: '66f1c0ffee0123456789abcd',
				dryRun,
			})),
			onError: 'continueRegularOutput',
		});

	test.each([
		['Send Email', sendParameters],
		['Send Campaign', sendCampaignParameters],
		['Add Profiles', addProfilesParameters],
	])(
		'%s reads it per item: true, 1 or " TRUE " is a dry run; "yes", "", null or 2 fails its item; nothing is sent',
		async (_, parameters) => {
			const result = await run(parameters, [...TRUE, ...UNCLEAR]);
			expect(sandbox.requests).toEqual([]);
			const outputs = result.success.flatMap((item) =>
				[item.pairedItem].flat().map(() => item.json.validateOnly ?? item.json.error),
			);
			expect(outputs).toEqual([
				...TRUE.map(() => true),
				...UNCLEAR.map(() => expect.stringMatching(/^Validate Only must be true or false/)),
			]);
			for (const item of result.success.filter((output) => output.json.error)) {
				expect(item.json.details?.kind).toBe('invalid_input');
			}
		},
	);

	test('false, "false", 0 or "0" reads as false: sent for real', async () => {
		const result = await run(sendParameters, FALSE);
		expect(result.success.map((item) => typeof item.json.messageId)).toEqual(
			FALSE.map(() => 'string'),
		);
		expect(sandbox.requests).toHaveLength(FALSE.length);
	});

	test('when in doubt, never send: one item asking for a dry run makes the whole run one', async () => {
		const result = await run(sendParameters, [false, 'maybe', false]);
		expect(sandbox.requests).toEqual([]);
		expect(result.success.map((output) => output.json.validateOnly ?? output.json.error)).toEqual([
			true,
			expect.stringMatching(/Validate Only must be true or false/),
			true,
		]);
		expectEachInputExactlyOnce(result, 3);
	});
});
