// @ts-check
'use strict';

/**
 * Every folder under test/fixtures/ is one test, named after the folder: its workflow.json (an
 * export from the n8n editor) runs in n8n's engine against a fresh sandbox, and what happened
 * must equal its expect.json (format: test/fixtures/README.md). Run one with
 * `npx jest test/fixtures.test.js -t <folder>`.
 */

const path = require('node:path');
const { FIXTURES_DIR, listFixtures, readExpectation, runFixture } = require('./harness/fixtures');
const { API_KEY } = require('./support');

test.each(listFixtures())('%s', async (name) => {
	const { actual, expected, visible } = await runFixture(path.join(FIXTURES_DIR, name));
	expect(actual).toEqual(expected);
	// Every fixture: the API key appears nowhere a user or a log reader could see it.
	expect(visible).not.toContain(API_KEY);
});

// A fixture can fail: each wrong expectation below differs from what the run did.
const DIR = path.join(FIXTURES_DIR, 'send-email-one-per-item');
/** @type {{ requests: object[], outputs: Record<string, object[][]>, state: { emails: object[] } }} */
const right = readExpectation(DIR);
test.each([
	['a request fewer', { requests: right.requests.slice(1) }],
	[
		'a header that must be absent',
		{
			requests: right.requests.map((request) => ({ ...request, headers: { authorization: null } })),
		},
	],
	[
		'an output item more',
		{ outputs: { 'Send Email': [[...right.outputs['Send Email'][0], {}], []] } },
	],
	[
		'one capture for two values',
		{ state: { emails: right.state.emails.map((email) => ({ ...email, messageId: '<$one>' })) } },
	],
	['an error where the run succeeds', { error: { name: '<any string>' } }],
	['a typo in a key', { output: {} }],
])('a fixture fails on %s', async (_case, wrong) => {
	const expectation = { ...right, ...wrong };
	const run = runFixture(DIR, expectation).catch((error) => ({ refused: error }));
	const result = /** @type {any} */ (await run);
	if (result.refused) expect(String(result.refused)).toMatch(/unknown key output/);
	else expect(result.actual).not.toEqual(result.expected);
});
