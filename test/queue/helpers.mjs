// Shared by the queue-mode tests: the e2e environment in queue mode and the sign-up form driven
// the way a browser submits it.
import fs from 'node:fs';
import path from 'node:path';
import { readExamples } from '../../dev/n8n-setup.mjs';
import {
	getExecution,
	latestExecutionId,
	submitForm,
	waitForExecutions,
} from '../e2e/executions.mjs';
import { startTestEnvironment } from '../e2e/helpers.mjs';

export const SIGNUP = 'beExampleSignup1';
export const log = (message) => process.stderr.write(`[queue] ${message}\n`);

/**
 * The e2e environment with Redis and Postgres on free ports, n8n main and `workers` workers (0:
 * regular mode, one n8n on SQLite), the sandbox's daily quota large enough for the bursts.
 */
export async function startQueueTestEnvironment({ workers = 2 } = {}) {
	if (process.env.N8N_DEV_RUNTIME && process.env.N8N_DEV_RUNTIME !== 'v2')
		throw new Error('the queue-mode tests run n8n 2.x only (unset N8N_DEV_RUNTIME)');
	const env = await startTestEnvironment({
		sandboxOptions: { dailyLimit: 100_000 },
		queue: workers > 0 ? { workers } : undefined,
		onProgress: log,
	});
	const signup = readExamples().find((e) => e.id === SIGNUP);
	return { ...env, formUrl: (formPath = signup.formPath) => `${env.n8n.url}/form/${formPath}` };
}

/** `count` different people: burst-<tag>-<i>@customer.test. */
export function people(count, tag) {
	return Array.from({ length: count }, (_, i) => ({
		firstName: `First${i}`,
		email: `burst-${tag}-${i}@customer.test`,
		company: 'Acme',
	}));
}

/**
 * Submits the sign-up form `copies` times per person, a person's copies at the same moment (a
 * double click), `concurrency` submissions at a time; waits until that many new executions have
 * ended and returns them with their run data decoded, each with `ranBy` (the workers whose log
 * shows it started) and `person` (whose submission it ran, from the form trigger's output). Every
 * submission must be answered 200.
 */
export async function submitSignups(
	env,
	persons,
	{ workflowId = SIGNUP, formPath, copies = 1, concurrency = 16, timeoutMs = 240_000 } = {},
) {
	const afterId = await latestExecutionId(env.rest, workflowId);
	const t0 = Date.now();
	const answers = (
		await mapLimit(persons, concurrency / copies, async (p) => {
			const submit = () => submitForm(env.formUrl(formPath), [p.firstName, p.email, p.company]);
			return await Promise.all(Array.from({ length: copies }, submit));
		})
	).flat();
	const refused = answers.filter((a) => a.status !== 200);
	if (refused.length)
		throw new Error(
			`${refused.length} of ${answers.length} submissions not answered 200, e.g. ${refused[0].status} ${refused[0].body.slice(0, 200)}`,
		);
	const submittedMs = Date.now() - t0;
	const summaries = await waitForExecutions(env.rest, workflowId, {
		afterId,
		count: answers.length,
		timeoutMs,
		onProgress: log,
	});
	const endedMs = Date.now() - t0;
	const ranBy = executionsByWorker(env.workers);
	const executions = await mapLimit(summaries, 4, async (summary) => {
		const execution = await getExecution(env.rest, summary.id, { n8nDir: env.n8nDir });
		const form = execution.runData['Sign-up form']?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
		return {
			...execution,
			ranBy: ranBy.get(String(summary.id)) ?? [],
			person: persons.find((p) => p.email === form.Email),
		};
	});
	log(
		`${answers.length} sign-ups submitted in ${(submittedMs / 1000).toFixed(1)}s, ` +
			`all executions ended after ${(endedMs / 1000).toFixed(1)}s; per worker: ${JSON.stringify(perWorker(executions))}`,
	);
	return executions;
}

/**
 * Which queue-mode worker ran which execution, from the workers' own logs: each worker logs
 * "Worker started execution <id> (job <n>)" (n8n's JobProcessor, at info level) in its log file.
 * @param {Array<{ name: string, logFile: string }>} workers
 * @returns {Map<string, string[]>} execution id -> names of the workers that started it
 */
export function executionsByWorker(workers) {
	const ranBy = new Map();
	for (const worker of workers) {
		const log = fs.readFileSync(worker.logFile, 'utf8');
		for (const [, id] of log.matchAll(/Worker started execution (\d+) \(job /g)) {
			ranBy.set(id, [...(ranBy.get(id) ?? []), worker.name]);
		}
	}
	return ranBy;
}

/** How many runs logged a call to n8n's deduplication store slower than the settle delay. */
export function slowStoreCalls(env) {
	const folder = path.join(env.tmp, 'n8n');
	const logs = fs.readdirSync(folder).filter((file) => file.endsWith('.log'));
	const slow = /deduplication store took \d+ ms, longer than the settle delay/g;
	return logs.reduce(
		(count, file) =>
			count + (fs.readFileSync(path.join(folder, file), 'utf8').match(slow) ?? []).length,
		0,
	);
}

/** { worker-1: n, worker-2: m } over executions that ran on exactly one worker. */
export function perWorker(executions) {
	const counts = {};
	for (const e of executions) {
		const key = e.ranBy.length === 1 ? e.ranBy[0] : `ran on ${e.ranBy.length} workers`;
		counts[key] = (counts[key] ?? 0) + 1;
	}
	return counts;
}

async function mapLimit(items, limit, fn) {
	const out = new Array(items.length);
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(limit, items.length) }, async () => {
			while (next < items.length) {
				const index = next++;
				out[index] = await fn(items[index]);
			}
		}),
	);
	return out;
}
