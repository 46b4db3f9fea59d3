// @ts-check
'use strict';

/**
 * The BasicsEngage sandbox in its own process for `npm run bench` (forked by bench/run.js with
 * an IPC channel), so serving requests never competes with the measured process for its event
 * loop or shows up in its RSS.
 *
 * Message from the parent: { cmd: 'reset' }, answered with what was received since the last
 * reset (requests, non-2xx answers) before the sandbox forgets it.
 */

const { startSandbox } = require('../test/sandbox/server');
const { API_KEY, LIST_ID } = require('./scenarios');

async function main() {
	let failedAnswers = 0;
	const sandbox = await startSandbox({
		port: 0,
		dailyLimit: Number.MAX_SAFE_INTEGER,
		verifiedSenders: null,
		lists: [{ listId: LIST_ID, name: 'Bench' }],
		apiKeys: [API_KEY],
		// Kept by reset(): counts non-2xx answers (the sandbox records requests, not answers).
		onResponse: ({ status }) => {
			if (typeof status !== 'number' || status < 200 || status > 299) failedAnswers += 1;
		},
	});

	process.on('message', () => {
		const stats = { requests: sandbox.requests.length, failedAnswers };
		sandbox.reset();
		failedAnswers = 0;
		process.send?.({ stats });
	});
	process.on('disconnect', () => {
		sandbox.close().then(() => process.exit(0));
	});
	process.send?.({ ready: true, baseUrl: sandbox.baseUrl });
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
