// @ts-check
'use strict';

/**
 * The node's Retries option at work: a run does as the unit tables' shouldRetry and
 * waitBeforeRetry say (test/unit/answers.test.js).
 */

const { contacts, runNode, sendParameters, useSandbox } = require('../support');

const sandbox = useSandbox();

const send = (/** @type {Record<string, unknown>} */ options) =>
	sendParameters({ options: { retryWait: 10, retrySendOnServerError: true, ...options } });

// Adding profiles (repeatable) is sent again without the option: test/node/errors.test.js, three
// requests per batch at Retries 2; Retries 0, one request per n8n try: retry-on-fail.test.js.
test('Send Email with Retry Send On Server Error, Retries 3: 4 requests at most, then the item fails as server_error', async () => {
	sandbox.injectFaults(Array(5).fill({ status: 502 }));
	const result = await runNode(sandbox, {
		parameters: send({ retries: 3 }),
		items: contacts(1),
		onError: 'continueErrorOutput',
	});
	expect(sandbox.requests).toHaveLength(4);
	expect(result.errors.map((item) => item.json.details.kind)).toEqual(['server_error']);
});

test('Retry-After is honoured before the retry', async () => {
	sandbox.injectFaults([{ path: '/email/send', status: 503, headers: { 'Retry-After': '1' } }]);
	const result = await runNode(sandbox, { parameters: send({}), items: contacts(1) });
	expect(result.success).toHaveLength(1);
	const [first, second] = sandbox.requests.map((request) => Date.parse(request.receivedAt));
	expect(second - first).toBeGreaterThanOrEqual(990);
});
