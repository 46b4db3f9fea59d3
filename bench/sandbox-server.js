// @ts-check
'use strict';

/**
 * The BasicsEngage sandbox in its own process for `npm run bench` (forked by bench/run.js with
 * an IPC channel), so serving requests never competes with the measured process for its event
 * loop or shows up in its RSS.
 *
 * Messages from the parent: { id, cmd: 'stats' | 'reset' }. 'stats' answers what was received
 * since the last reset: requests per path, profiles carried, emails queued, non-2xx answers.
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

	function stats() {
		/** @type {Record<string, number>} */
		const byPath = {};
		let profiles = 0;
		for (const request of sandbox.requests) {
			byPath[request.path] = (byPath[request.path] ?? 0) + 1;
			const body = /** @type {any} */ (request.body);
			if (request.path === '/list/addProfiles' && Array.isArray(body?.profiles)) {
				profiles += body.profiles.length;
			}
		}
		return {
			requests: sandbox.requests.length,
			byPath,
			profiles,
			emails: sandbox.state.emails.length,
			failedAnswers,
		};
	}

	process.on('message', (/** @type {{ id: number, cmd: string }} */ message) => {
		if (message.cmd === 'stats') {
			process.send?.({ id: message.id, stats: stats() });
		} else if (message.cmd === 'reset') {
			const before = stats();
			sandbox.reset();
			failedAnswers = 0;
			process.send?.({ id: message.id, stats: before });
		}
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
