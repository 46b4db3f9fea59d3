// The Skip Emails Already Sent part of `npm run bench` (`--only skip`; see bench/README.md): Send
// Email over 10,000 and 20,000 emails in a real n8n (one process, SQLite), so the option meets
// n8n's own deduplication store as n8n ships it: one database row per node, read and rewritten
// by every call. Two workflows, the same but for the option (History Size 20,000), are each
// started by a webhook that hands them the addresses (Split Out makes one item each). Per round
// and size: the option off; on with new addresses (each email claimed and sent); on with the
// same addresses again (each found and skipped). The wall time is the webhook's, which answers
// when the workflow has finished.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { startEnvironment } from '../dev/dev.mjs';
import { activateWorkflow, SANDBOX_CREDENTIAL } from '../dev/n8n-setup.mjs';
import parameters from '../test/parameters.js';

const { sendParameters } = parameters;

export { n8nSkipReason as skipReason } from './queue.mjs';

/** Enough for the largest size, so the emails sent again are all found. */
const HISTORY = 20_000;

const CREDENTIAL = {
	basicsEngageApi: { id: SANDBOX_CREDENTIAL.id, name: SANDBOX_CREDENTIAL.name },
};

/** A workflow: webhook → Split Out → Send Email, with or without the option. */
function workflow(name, skipAlreadySent) {
	const send = {
		name: 'Send Email',
		type: 'n8n-nodes-basicsengage.basicsEngage',
		typeVersion: 1,
		position: [440, 0],
		credentials: CREDENTIAL,
		parameters: sendParameters({
			options: skipAlreadySent ? { skipAlreadySent: { settings: { historySize: HISTORY } } } : {},
		}),
	};
	return {
		name,
		nodes: [
			{
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: name,
				parameters: { httpMethod: 'POST', path: name, responseMode: 'lastNode' },
			},
			{
				name: 'Split Out',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [220, 0],
				parameters: { fieldToSplitOut: 'body.emails', include: 'noOtherFields' },
			},
			send,
		],
		connections: {
			Webhook: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
			'Split Out': { main: [[{ node: 'Send Email', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** One execution over `emails`; its wall time and what the sandbox got. */
async function execute(env, name, emails) {
	const before = env.sandbox.state.emails.length;
	const t0 = performance.now();
	const response = await fetch(`${env.n8n.url}/webhook/${name}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ emails: emails.map((email) => ({ email })) }),
	});
	await response.text();
	const wallMs = performance.now() - t0;
	return {
		wallMs,
		sent: env.sandbox.state.emails.length - before,
		check: response.ok ? null : `the webhook answered ${response.status}`,
		loadavg: os.loadavg()[0],
	};
}

/**
 * Starts n8n, runs `runs` rounds over each size and stops it.
 * @param {{ runs: number, sizes: number[], packageDir: string, log: (message: string) => void }} options
 */
export async function measureSkip({ runs, sizes, packageDir, log }) {
	const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-bench-skip-'));
	let env;
	try {
		env = await startEnvironment({
			sandboxPort: 0,
			sandboxOptions: { dailyLimit: Number.MAX_SAFE_INTEGER },
			userFolder: tmp,
			packageDir,
			onProgress: () => {},
			n8nEnv: { N8N_PAYLOAD_SIZE_MAX: '64' },
		});
		for (const [name, skip] of [
			['bench-skip-off', false],
			['bench-skip-on', true],
		]) {
			const created = await env.rest.post('/rest/workflows', workflow(name, skip));
			await activateWorkflow(env.rest, created.id);
			const warmUp = Array.from({ length: 100 }, (_, i) => `warm-up-${i}@customer.test`);
			await execute(env, name, warmUp); // untimed
		}
		const measurements = [];
		for (let round = 1; round <= runs; round++) {
			for (const size of sizes) {
				const emails = (tag) =>
					Array.from({ length: size }, (_, i) => `${tag}-${size}-${round}-${i}@customer.test`);
				const fresh = emails('on');
				for (const [key, name, addresses] of [
					['off', 'bench-skip-off', emails('off')],
					['on', 'bench-skip-on', fresh],
					['on, again', 'bench-skip-on', fresh],
				]) {
					const m = await execute(env, name, addresses);
					measurements.push({ key, size, round, ...m });
					log(
						`round ${round}/${runs} [skip] ${fmt(size)} emails, option ${key}: ${fmt(m.wallMs)} ms, ` +
							`${fmt(m.sent)} sent, load ${m.loadavg.toFixed(2)}${m.check ? `  CHECK FAILED: ${m.check}` : ''}`,
					);
				}
			}
		}
		const table = skipRows(sizes, measurements);
		return { measurements, table, goals: growthGoals(table) };
	} finally {
		await env?.stop();
		await fsp.rm(tmp, { recursive: true, force: true });
	}
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const median = (values) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/** Per size: median wall times, and the option's cost as a ratio to the run without it. */
function skipRows(sizes, measurements) {
	return sizes.map((size) => {
		const ms = (key) =>
			median(measurements.filter((m) => m.size === size && m.key === key).map((m) => m.wallMs));
		const [off, on, again] = [ms('off'), ms('on'), ms('on, again')];
		return { size, off, on, again, onRatio: on / off, againRatio: again / off };
	});
}

/** Linear cost: the time per email at the largest size over that at the smallest. */
const LINEAR_WITHIN = 1.3;

function growthGoals(rows) {
	if (rows.length < 2) return [];
	const [first, last] = [rows[0], rows[rows.length - 1]];
	return ['on', 'again'].map((key) => {
		const growth = last[key] / first[key] / (last.size / first.size);
		return {
			goal: `Skip Emails Already Sent (${key === 'on' ? 'new emails' : 'same emails again'}): time per email from ${fmt(first.size)} to ${fmt(last.size)} emails grows at most ${LINEAR_WITHIN}x (linear)`,
			status: growth <= LINEAR_WITHIN ? 'PASS' : 'MISS',
			detail: `${growth.toFixed(2)}x`,
		};
	});
}

/** The table `npm run bench` prints. */
export function formatSkipTable(rows) {
	const lines = [
		'| emails | option off | on (new emails) | on (same emails again) |',
		'|---|---|---|---|',
	];
	for (const row of rows) {
		lines.push(
			`| ${fmt(row.size)} | ${fmt(row.off)} ms | ${fmt(row.on)} ms (${row.onRatio.toFixed(2)}x) | ` +
				`${fmt(row.again)} ms (${row.againRatio.toFixed(2)}x) |`,
		);
	}
	if (rows.length > 1) {
		const [first, last] = [rows[0], rows[rows.length - 1]];
		const growth = (a, b) => (b / a / (last.size / first.size)).toFixed(2);
		lines.push(
			`\nFrom ${fmt(first.size)} to ${fmt(last.size)} emails, time per email grows ` +
				`${growth(first.off, last.off)}x off, ${growth(first.on, last.on)}x on, ` +
				`${growth(first.again, last.again)}x on again (1.00 = linear).`,
		);
	}
	return lines.join('\n');
}
