// @ts-check
'use strict';

/**
 * Runs in every test file (jest `setupFilesAfterEnv`): once the file is done,
 * stop what n8n's engine started in it, as the n8n CLI does when it shuts
 * down. Files that never loaded the harness (./n8n.js) have nothing to stop.
 */
afterAll(() => {
	const shutdown = /** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')];
	if (typeof shutdown === 'function') shutdown();
});
