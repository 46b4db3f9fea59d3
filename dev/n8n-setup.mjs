// Puts the example workflows and a sandbox credential into a running n8n (started with
// dev/start-n8n.mjs) and talks to its REST API. Shared by `npm run dev` (dev/dev.mjs) and the
// end-to-end tests (test/e2e/). Plain Node ESM, no dependencies.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = path.resolve(HERE, '..');
export const EXAMPLES_DIR = path.join(REPO_DIR, 'examples');

/** The credential the examples reference (by id and name). */
export const SANDBOX_CREDENTIAL = Object.freeze({
	id: 'beSandboxCred001',
	name: 'BasicsEngage sandbox',
	type: 'basicsEngageApi',
});

export const DEMO_API_KEY = 'be_sandbox_demo_key';

/** The list the sign-up example adds people to; the dev sandbox creates it at start. */
export const NEWSLETTER_LIST = Object.freeze({ listId: 'list_newsletter', name: 'Newsletter' });

/** The owner `npm run dev` creates (documented in README.md). Local use only. */
export const DEV_OWNER = Object.freeze({
	email: 'dev@example.com',
	password: 'Devpassw0rd!',
	firstName: 'Dev',
	lastName: 'User',
});

/** Node type of n8n's MCP Server Trigger (in n8n's own @n8n/n8n-nodes-langchain). */
export const MCP_TRIGGER_TYPE = '@n8n/n8n-nodes-langchain.mcpTrigger';

/**
 * The example workflows, read from examples/*.json. `formPath` / `mcpPath` are set for a workflow
 * with a Form Trigger / MCP Server Trigger: such a workflow only works once published
 * (`formName`: the Form Trigger's name).
 */
export function readExamples() {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((file) => {
			const workflow = JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8'));
			const form = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.formTrigger');
			const mcp = workflow.nodes.find((n) => n.type === MCP_TRIGGER_TYPE);
			return {
				file: path.join(EXAMPLES_DIR, file),
				id: workflow.id,
				name: workflow.name,
				workflow,
				formPath: form ? form.parameters?.options?.path || form.webhookId : undefined,
				formName: form?.name,
				mcpPath: mcp ? mcp.parameters?.path : undefined,
			};
		});
}

async function cli(n8n, args) {
	const res = await n8n.runCli(args);
	if (res.code !== 0)
		throw new Error(
			`n8n ${args.join(' ')} failed (exit ${res.code}):\n${res.stdout}\n${res.stderr}`,
		);
	return res;
}

/** `n8n import:credentials` of the sandbox credential (same id: overwrites it). */
export async function importCredential(n8n, { apiKey = DEMO_API_KEY, baseUrl }) {
	const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-cred-'));
	try {
		const file = path.join(dir, 'credential.json');
		// plain data: n8n encrypts it with the instance's key on import
		await fsp.writeFile(
			file,
			JSON.stringify([{ ...SANDBOX_CREDENTIAL, data: { apiKey, baseUrl } }]),
			{ mode: 0o600 },
		);
		return await cli(n8n, ['import:credentials', `--input=${file}`]);
	} finally {
		await fsp.rm(dir, { recursive: true, force: true });
	}
}

/**
 * `n8n import:workflow` of the given examples (same ids: overwrites them, inactive), all in one
 * call: each call of n8n's CLI boots n8n, about 5 seconds.
 */
export async function importWorkflows(n8n, examples) {
	const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-workflows-'));
	try {
		for (const { file } of examples) await fsp.copyFile(file, path.join(dir, path.basename(file)));
		return await cli(n8n, ['import:workflow', '--separate', `--input=${dir}`]);
	} finally {
		await fsp.rm(dir, { recursive: true, force: true });
	}
}

/** A small REST client for n8n's internal API with a session cookie. */
export function restClient(url, cookie) {
	const call = async (method, p, body) => {
		const res = await fetch(url + p, {
			method,
			headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		if (!res.ok)
			throw Object.assign(new Error(`${method} ${p} -> ${res.status} ${text.slice(0, 500)}`), {
				status: res.status,
			});
		let json;
		try {
			json = JSON.parse(text);
		} catch {}
		return json?.data !== undefined && Object.keys(json).length === 1 ? json.data : json;
	};
	return {
		get: (p) => call('GET', p),
		post: (p, body = {}) => call('POST', p, body),
		patch: (p, body = {}) => call('PATCH', p, body),
	};
}

/**
 * True when the workflow's current version is live. n8n 2.x publishes a version (activeVersionId);
 * n8n 1.x has no versions to publish, only the `active` flag. Told apart by the field, not the
 * version number.
 */
export function isPublished(workflow) {
	if ('activeVersionId' in workflow)
		return Boolean(workflow.activeVersionId) && workflow.activeVersionId === workflow.versionId;
	return workflow.active === true;
}

/** Publishes (activates) a workflow's current version, so its triggers (e.g. a form) go live. */
export async function activateWorkflow(rest, workflowId) {
	const workflow = await rest.get(`/rest/workflows/${workflowId}`);
	if (isPublished(workflow)) return workflow;
	if ('activeVersionId' in workflow)
		return await rest.post(`/rest/workflows/${workflowId}/activate`, {
			versionId: workflow.versionId,
		});
	// n8n 1.x: activating is an update of the `active` flag
	return await rest.patch(`/rest/workflows/${workflowId}`, {
		active: true,
		versionId: workflow.versionId,
	});
}

/** Executions of a workflow, newest first: [{ id, status, finished, mode, ... }]. */
export async function listExecutions(rest, workflowId) {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const page = await rest.get(`/rest/executions?filter=${filter}&limit=50`);
	return (page.results ?? page ?? []).slice().sort((a, b) => Number(b.id) - Number(a.id));
}

/**
 * Waits for a new execution of `workflowId` (id greater than `afterId`) to end and returns it
 * with its run data decoded: { id, status, runData: { [nodeName]: taskData[] }, lastNodeExecuted }.
 */
export async function waitForExecution(
	rest,
	workflowId,
	{ afterId = 0, timeoutMs = 60_000, n8nDir } = {},
) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const done = (await listExecutions(rest, workflowId)).find(
			(e) => Number(e.id) > Number(afterId) && !['new', 'running', 'waiting'].includes(e.status),
		);
		if (done) return await getExecution(rest, done.id, { n8nDir });
		if (Date.now() > deadline)
			throw new Error(`no finished execution of ${workflowId} after ${timeoutMs} ms`);
		await new Promise((r) => setTimeout(r, 300));
	}
}

/** One execution with its run data decoded (n8n stores it in the `flatted` format). */
export async function getExecution(rest, executionId, { n8nDir }) {
	const execution = await rest.get(`/rest/executions/${executionId}`);
	const { parse } = flatted(n8nDir);
	const data = typeof execution.data === 'string' ? parse(execution.data) : execution.data;
	return {
		id: execution.id,
		status: execution.status,
		mode: execution.mode,
		runData: data?.resultData?.runData ?? {},
		lastNodeExecuted: data?.resultData?.lastNodeExecuted,
		error: data?.resultData?.error,
	};
}

/** n8n's own copy of `flatted` (no dependency of ours). */
function flatted(n8nDir) {
	if (!n8nDir) throw new Error('n8nDir (from provisionN8n) is needed to decode execution data');
	return createRequire(path.join(n8nDir, 'node_modules', 'n8n', 'package.json'))('flatted');
}

/** The json of every item a node output on `outputIndex` in its first run. */
export function nodeOutput(execution, nodeName, outputIndex = 0) {
	const run = execution.runData[nodeName]?.[0];
	return (run?.data?.main?.[outputIndex] ?? []).map((item) => item.json);
}

/** Submits a form the way a browser does (multipart, fields `field-<n>` in form order). */
export async function submitForm(formUrl, values) {
	return (await submitForms(formUrl, [values]))[0];
}

/** Waits until a published form answers GET (n8n registers its webhooks just after activation). */
export async function waitForForm(formUrl, { timeoutMs = 30_000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const res = await fetch(formUrl).catch(() => undefined);
		if (res?.status === 200) return await res.text();
		if (Date.now() > deadline)
			throw new Error(
				`${formUrl} did not answer 200 within ${timeoutMs} ms (last: ${res?.status})`,
			);
		await new Promise((r) => setTimeout(r, 200));
	}
}

/**
 * The production URL of a published MCP Server Trigger (version 2 and later: one path for
 * Streamable HTTP; n8n serves production MCP endpoints under /mcp/).
 */
export function mcpUrl(n8nUrl, mcpPath) {
	return `${n8nUrl}/mcp/${mcpPath}`;
}

/**
 * Waits until a published MCP Server Trigger answers (n8n registers its webhooks just after
 * activation, and answers 404 until then). The probe is a JSON-RPC ping without a session: the
 * server refuses it (400, no session is created), which proves the endpoint is there.
 */
export async function waitForMcp(url, { timeoutMs = 30_000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const res = await fetch(url, {
			method: 'POST',
			headers: {
				'content-type': 'application/json',
				accept: 'application/json, text/event-stream',
			},
			body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
		}).catch(() => undefined);
		await res?.body?.cancel().catch(() => {});
		if (res && res.status !== 404 && res.status < 500) return res.status;
		if (Date.now() > deadline)
			throw new Error(`${url} did not answer within ${timeoutMs} ms (last: ${res?.status})`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

// ---------------------------------------------------------------- many executions (queue mode)

/** Every execution status n8n 2.x knows; listing by status is what lets the REST API page. */
const EXECUTION_STATUSES = [
	'new',
	'running',
	'waiting',
	'success',
	'error',
	'crashed',
	'canceled',
	'unknown',
];
const UNFINISHED = ['new', 'running', 'waiting'];

/** `filter=` of GET /rest/executions: one workflow, every status (plus `extra`, e.g. startedBefore). */
const executionsFilter = (workflowId, extra = {}) =>
	encodeURIComponent(JSON.stringify({ workflowId, status: EXECUTION_STATUSES, ...extra }));

/**
 * Every execution of `workflowId` with an id above `afterId`, oldest first: [{ id, status, mode,
 * startedAt, stoppedAt, ... }]. n8n 2.41 (the queue-mode tests' line) orders a page of
 * GET /rest/executions by start time (at most 100 rows), and its `nextCursor` keeps only ids below
 * the page's last row, which would skip an execution that started before a lower id (usual in
 * queue mode). So the pages are windows of `startedBefore` (inclusive: each the oldest start of
 * the page before; rows kept once by id), through the workflow's whole history. An execution not
 * started yet ('new') has no start time: it is listed only when among the newest 100.
 */
export async function listExecutionsSince(rest, workflowId, { afterId = 0 } = {}) {
	const byId = new Map();
	let { results = [] } = await rest.get(
		`/rest/executions?filter=${executionsFilter(workflowId)}&limit=100`,
	);
	for (let page = 0; ; page++) {
		let added = 0;
		for (const execution of results) {
			if (byId.has(String(execution.id))) continue;
			byId.set(String(execution.id), execution);
			added++;
		}
		const starts = results
			.map((e) => e.startedAt)
			.filter(Boolean)
			.sort();
		if (results.length < 100 || starts.length === 0) break;
		if (page > 0 && added === 0)
			throw new Error(`listing the executions of ${workflowId}: 100 of them share one start time`);
		const filter = executionsFilter(workflowId, { startedBefore: starts[0] });
		({ results = [] } = await rest.get(`/rest/executions?filter=${filter}&limit=100`));
	}
	return [...byId.values()]
		.filter((e) => Number(e.id) > Number(afterId))
		.sort((a, b) => Number(a.id) - Number(b.id));
}

/** The id of the newest execution of `workflowId`, whatever its status (0 when none). */
export async function latestExecutionId(rest, workflowId) {
	// the highest id of the newest 100: n8n 2.41 sorts a page by start time, not by id
	const { results = [] } = await rest.get(
		`/rest/executions?filter=${executionsFilter(workflowId)}&limit=100`,
	);
	return results.reduce((max, e) => Math.max(max, Number(e.id)), 0);
}

/**
 * Waits until `count` executions of `workflowId` above `afterId` have ended (polling once a
 * second) and returns them, oldest first. Throws after `timeoutMs`, saying how far it got.
 */
export async function waitForExecutions(
	rest,
	workflowId,
	{ afterId = 0, count, timeoutMs = 120_000, onProgress } = {},
) {
	const deadline = Date.now() + timeoutMs;
	let lastReport = 0;
	for (;;) {
		const executions = await listExecutionsSince(rest, workflowId, { afterId });
		const ended = executions.filter((e) => !UNFINISHED.includes(e.status));
		if (ended.length >= count) return ended;
		if (Date.now() > deadline)
			throw new Error(
				`${ended.length} of ${count} executions of ${workflowId} ended within ${timeoutMs} ms (${executions.length} started)`,
			);
		if (onProgress && Date.now() - lastReport > 10_000) {
			lastReport = Date.now();
			onProgress(`${ended.length}/${count} executions ended`);
		}
		await new Promise((r) => setTimeout(r, 1_000));
	}
}

/**
 * Submits a form once per row of `rows` (each an array of field values, as submitForm takes),
 * at most `concurrency` at a time; each submission gives up after `timeoutMs`.
 * @returns {Promise<Array<{ status: number, body: string }>>} in the order of `rows`
 */
export async function submitForms(formUrl, rows, { concurrency = 10, timeoutMs = 60_000 } = {}) {
	const results = new Array(rows.length);
	let next = 0;
	const submitter = async () => {
		while (next < rows.length) {
			const index = next++;
			const body = new FormData();
			rows[index].forEach((value, field) => body.append(`field-${field}`, String(value)));
			try {
				const res = await fetch(formUrl, {
					method: 'POST',
					body,
					signal: AbortSignal.timeout(timeoutMs),
				});
				results[index] = { status: res.status, body: await res.text() };
			} catch (error) {
				results[index] = { status: 0, body: String(error?.cause?.code ?? error?.message ?? error) };
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, submitter));
	return results;
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
