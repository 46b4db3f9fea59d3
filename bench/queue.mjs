// The queue-mode part of `npm run bench` (`--only queue`; see bench/README.md): emails per second
// through a real n8n, the sign-up form example (examples/welcome-signup-form.json: Form Trigger,
// Send Email, Add Profiles to List) fed by a burst of form submissions, measured against the
// sandbox, in two setups started side by side on this machine:
//   - single: one n8n process, regular mode, SQLite (what `npm run dev` runs),
//   - queue:  n8n queue mode, a main process and two workers, Redis and Postgres
//             (what `npm run dev:queue` runs).
// Each round submits `submissions` sign-ups (`concurrency` at a time) to one setup, then to the
// other; the wall time runs from the first submission until the sandbox has received every
// email and every list add of the burst. Before the rounds each setup gets an untimed warm-up
// burst. Between bursts the executions are left to end and are checked (all succeeded, one
// email per person), untimed.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { startEnvironment } from '../dev/dev.mjs';
import {
	executionsByWorker,
	latestExecutionId,
	listExecutionsSince,
	readExamples,
	submitForms,
	waitForExecutions,
} from '../dev/n8n-setup.mjs';
import { cacheRoot, selectRuntime } from '../dev/provision.mjs';
import { findPostgres } from '../dev/queue-services.mjs';

const SIGNUP = 'beExampleSignup1';

/** Why no real n8n can be started here (nothing is installed by the bench), or undefined. */
export function n8nSkipReason() {
	const runtime = selectRuntime('v2');
	const { dependencies } = JSON.parse(
		fs.readFileSync(path.join(runtime.dir, 'package.json'), 'utf8'),
	);
	const n8nDir = path.join(cacheRoot(), `n8n-${dependencies.n8n}`);
	if (!fs.existsSync(path.join(n8nDir, 'node_modules', 'n8n', 'package.json')))
		return 'n8n is not provisioned: run `npm run test:queue` (or `node dev/provision.mjs`) once';
	return undefined;
}

/** Why the queue part cannot run here, or undefined. */
export function queueSkipReason() {
	if (!fs.existsSync('/usr/bin/redis-server') || !findPostgres())
		return 'redis-server or postgresql is missing: run `npm run test:queue` once (installs them with apt-get)';
	return n8nSkipReason();
}

/** One burst against one setup: timed until the sandbox has every email and list add. */
async function burst(env, { tag, submissions, concurrency, timeoutMs = 600_000 }) {
	const { sandbox, rest } = env;
	sandbox.reset();
	const afterId = await latestExecutionId(rest, SIGNUP);
	const rows = Array.from({ length: submissions }, (_, i) => [
		`First${i}`,
		`bench-${tag}-${i}@customer.test`,
		'Acme',
	]);
	const done = () =>
		sandbox.state.emails.length >= submissions &&
		sandbox.requests.filter((r) => r.path === '/list/addProfiles').length >= submissions;
	const t0 = performance.now();
	const answers = await submitForms(env.formUrl, rows, { concurrency });
	const refused = answers.filter((a) => a.status !== 200).length;
	const deadline = Date.now() + timeoutMs;
	while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
	const wallMs = performance.now() - t0;

	// untimed: every execution ended; check what it did
	const executions = await waitForExecutions(rest, SIGNUP, {
		afterId,
		count: submissions - refused,
		timeoutMs: 300_000,
	}).catch(async () => listExecutionsSince(rest, SIGNUP, { afterId }));
	const checks = [];
	if (refused) checks.push(`${refused} submissions not answered 200`);
	if (!done())
		checks.push(`the sandbox did not get every email and list add within ${timeoutMs} ms`);
	const failed = executions.filter((e) => e.status !== 'success').length;
	if (failed) checks.push(`${failed} executions did not succeed`);
	const sentTo = new Set(sandbox.state.emails.map((e) => e.to));
	if (sentTo.size !== submissions || sandbox.state.emails.length !== submissions)
		checks.push(
			`${sandbox.state.emails.length} emails to ${sentTo.size} addresses for ${submissions} sign-ups`,
		);
	let perWorker;
	if (env.workers.length) {
		perWorker = {};
		const ranBy = executionsByWorker(env.workers);
		for (const e of executions) {
			const names = ranBy.get(String(e.id)) ?? ['none'];
			for (const name of names) perWorker[name] = (perWorker[name] ?? 0) + 1;
		}
	}
	return {
		wallMs,
		emails: sandbox.state.emails.length,
		emailsPerSecond: submissions / (wallMs / 1000),
		perWorker,
		check: checks.join('; ') || null,
		loadavg: os.loadavg()[0],
	};
}

/**
 * Starts both setups, runs `runs` interleaved rounds and stops them.
 * @param {{ runs: number, submissions: number, concurrency: number, warmup: number,
 *   packageDir: string, log: (message: string) => void }} options
 */
export async function measureQueue({ runs, submissions, concurrency, warmup, packageDir, log }) {
	const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-bench-queue-'));
	await fsp.chmod(tmp, 0o711); // Postgres runs as the postgres user when we are root
	const formPath = readExamples().find((e) => e.id === SIGNUP).formPath;
	const setups = [
		{ key: 'single', label: 'n8n, one process (regular mode, SQLite)' },
		{
			key: 'queue',
			label: 'n8n queue mode: main + 2 workers (Redis, Postgres)',
			queue: { workers: 2 },
		},
	];
	const quiet = () => {};
	try {
		for (const setup of setups) {
			const t0 = Date.now();
			setup.env = await startEnvironment({
				sandboxPort: 0,
				sandboxOptions: { dailyLimit: Number.MAX_SAFE_INTEGER },
				userFolder: path.join(tmp, setup.key),
				importExamples: 'always',
				packageDir,
				queue: setup.queue,
				onProgress: quiet,
			});
			setup.env.formUrl = `${setup.env.n8n.url}/form/${formPath}`;
			log(`queue bench: ${setup.key} setup started in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
		}
		for (const setup of setups) {
			const w = await burst(setup.env, {
				tag: `${setup.key}-warmup`,
				submissions: warmup,
				concurrency,
			});
			log(
				`queue bench: ${setup.key} warm-up, ${warmup} sign-ups: ${Math.round(w.wallMs)} ms${w.check ? `  CHECK FAILED: ${w.check}` : ''}`,
			);
		}
		const measurements = [];
		for (let round = 1; round <= runs; round++) {
			for (const setup of setups) {
				const m = await burst(setup.env, {
					tag: `${setup.key}-${round}`,
					submissions,
					concurrency,
				});
				measurements.push({ key: setup.key, round, submissions, concurrency, ...m });
				log(
					`round ${round}/${runs} [queue] ${setup.key}: ${submissions} sign-ups in ${Math.round(m.wallMs)} ms, ` +
						`${m.emailsPerSecond.toFixed(1)} emails/s, load ${m.loadavg.toFixed(2)}` +
						(m.perWorker ? `, per worker ${JSON.stringify(m.perWorker)}` : '') +
						(m.check ? `  CHECK FAILED: ${m.check}` : ''),
				);
			}
		}
		return {
			setups: setups.map(({ key, label }) => ({ key, label })),
			measurements,
		};
	} finally {
		for (const setup of setups) await setup.env?.stop();
		await fsp.rm(tmp, { recursive: true, force: true });
	}
}
