// @ts-check
'use strict';

/**
 * The node's Retries option at work: a run does as the unit tables' shouldRetry and
 * waitBeforeRetry say (test/unit/answers.test.js).
 */

const {
	addProfilesParameters,
	contacts,
	runNode,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ lists: [{ listId: 'lst_existing', name: 'Existing' }] });

const send = (/** @type {Record<string, unknown>} */ options) =>
	sendParameters({ options: { retryWait: 10, retrySendOnServerError: true, ...options } });

test.each([
	['Send Email with Retry Send On Server Error, Retries 3', send({ retries: 3 }), '/email/send', 4],
	['Send Email with Retry Send On Server Error, Retries 0', send({ retries: 0 }), '/email/send', 1],
	[
		'Add Profiles (adding is repeatable), Retries 1',
		addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_existing',
			options: { retries: 1, retryWait: 10 },
		}),
		'/list/addProfiles',
		2,
	],
])(
	'%s: %i requests at most, then the item fails as server_error',
	async (_, parameters, path, count) => {
		sandbox.injectFaults(Array(5).fill({ path, status: 502 }));
		const result = await runNode(sandbox, {
			parameters,
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(count);
		expect(result.errors.map((item) => item.json.details.kind)).toEqual(['server_error']);
	},
);

test('Retry-After is honoured before the retry', async () => {
	sandbox.injectFaults([{ path: '/email/send', status: 503, headers: { 'Retry-After': '1' } }]);
	const result = await runNode(sandbox, { parameters: send({}), items: contacts(1) });
	expect(result.success).toHaveLength(1);
	const [first, second] = sandbox.requests.map((request) => Date.parse(request.receivedAt));
	expect(second - first).toBeGreaterThanOrEqual(990);
});
