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

test('Retry-After is honoured before the retry', async () => {
	sandbox.injectFaults([{ path: '/email/send', status: 503, headers: { 'Retry-After': '1' } }]);
	const result = await runNode(sandbox, { parameters: send({}), items: contacts(1) });
	expect(result.success).toHaveLength(1);
	const [first, second] = sandbox.requests.map((request) => Date.parse(request.receivedAt));
	expect(second - first).toBeGreaterThanOrEqual(990);
});
