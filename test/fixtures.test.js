// @ts-check
'use strict';

/**
 * Every folder under test/fixtures/ is one test, named after the folder: its workflow.json (an
 * export from the n8n editor) runs in n8n's engine against a fresh sandbox, and what happened
 * must equal its expect.json (format: test/fixtures/README.md). Run one with
 * `npx jest test/fixtures.test.js -t <folder>`.
 */

const path = require('node:path');
const { FIXTURES_DIR, listFixtures, runFixture } = require('./harness/fixtures');

const fixtures = listFixtures();

test('there are fixtures', () => {
	expect(fixtures.length).toBeGreaterThan(0);
});

test.each(fixtures)('%s', async (name) => {
	const { actual, expected, apiKey, visible } = await runFixture(path.join(FIXTURES_DIR, name));
	expect(actual).toEqual(expected);
	// Every fixture: the API key appears nowhere a user or a log reader could see it.
	expect(visible).not.toContain(apiKey);
});
