// A workflow's executions in a running n8n, read through its REST API (dev/n8n-setup.mjs's
// restClient), and the form submissions that start them. Shared by test/e2e and test/queue.
import { createRequire } from 'node:module';
import path from 'node:path';

const UNFINISHED = ['new', 'running', 'waiting'];
/** Every execution status n8n knows; listing by status is what lets the REST API page. */
const EXECUTION_STATUSES = [...UNFINISHED, 'success', 'error', 'crashed', 'canceled', 'unknown'];

/** GET /rest/executions: 100 of a workflow's, every status (`startedBefore`: started no later). */
const hundredExecutions = (rest, workflowId, startedBefore) => {
	const filter = JSON.stringify({ workflowId, status: EXECUTION_STATUSES, startedBefore });
	return rest.get(`/rest/executions?filter=${encodeURIComponent(filter)}&limit=100`);
};

/**
 * Every execution of `workflowId` with an id above `afterId`, oldest first: [{ id, status, mode,
 * startedAt, stoppedAt, ... }]. n8n 2.41 orders a page of GET /rest/executions by start time (at
 * most 100 rows), and its `nextCursor` keeps only ids below the page's last row, which would skip
 * an execution that started before a lower id (usual in queue mode). So the pages are windows of
 * `startedBefore` (inclusive: each the oldest start of the page before; rows kept once by id),
 * through the workflow's whole history. An execution not started yet ('new') has no start time:
 * it is listed only when among the newest 100.
 */
export async function listExecutionsSince(rest, workflowId, { afterId = 0 } = {}) {
	const byId = new Map();
	for (let startedBefore; ; ) {
		const { results = [] } = await hundredExecutions(rest, workflowId, startedBefore);
		const known = byId.size;
		for (const execution of results) byId.set(String(execution.id), execution);
		const starts = results.flatMap((e) => e.startedAt ?? []).sort();
		if (results.length < 100 || starts.length === 0) break;
		if (byId.size === known)
			throw new Error(`listing the executions of ${workflowId}: 100 of them share one start time`);
		startedBefore = starts[0];
	}
	return [...byId.values()]
		.filter((e) => Number(e.id) > Number(afterId))
		.sort((a, b) => Number(a.id) - Number(b.id));
}

/** The id of the newest execution of `workflowId`, whatever its status (0 when none). */
export async function latestExecutionId(rest, workflowId) {
	// the highest id of the newest 100: n8n 2.41 sorts a page by start time, not by id
	const { results = [] } = await hundredExecutions(rest, workflowId);
	return results.reduce((max, e) => Math.max(max, Number(e.id)), 0);
}

/**
 * Waits until `count` executions of `workflowId` above `afterId` have ended (polling every
 * `pollMs`) and returns them, oldest first. Throws after `timeoutMs`, saying how far it got.
 */
export async function waitForExecutions(
	rest,
	workflowId,
	{ afterId = 0, count, timeoutMs = 120_000, pollMs = 1_000, onProgress } = {},
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
		await new Promise((r) => setTimeout(r, pollMs));
	}
}

/** The next execution of `workflowId` above `afterId` to end, as `getExecution` returns it. */
export async function waitForExecution(rest, workflowId, { n8nDir, ...options } = {}) {
	const wait = { count: 1, timeoutMs: 60_000, pollMs: 300, ...options };
	const [ended] = await waitForExecutions(rest, workflowId, wait);
	return await getExecution(rest, ended.id, { n8nDir });
}

/**
 * One execution with its run data decoded, by n8n's own copy of `flatted` (no dependency of ours):
 * { id, status, mode, runData: { [nodeName]: taskData[] }, lastNodeExecuted, error }.
 */
export async function getExecution(rest, executionId, { n8nDir }) {
	if (!n8nDir) throw new Error('n8nDir (from provisionN8n) is needed to decode execution data');
	const execution = await rest.get(`/rest/executions/${executionId}`);
	const require = createRequire(path.join(n8nDir, 'node_modules', 'n8n', 'package.json'));
	const { parse } = require('flatted');
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

/** The nodes an execution ran, sorted. */
export const ran = (execution) => Object.keys(execution.runData).sort();

/** The json of every item a node output on `outputIndex` in its first run. */
export function nodeOutput(execution, nodeName, outputIndex = 0) {
	const run = execution.runData[nodeName]?.[0];
	return (run?.data?.main?.[outputIndex] ?? []).map((item) => item.json);
}

/**
 * Submits a form the way a browser does (multipart, fields `field-<n>` in form order); gives up
 * after `timeoutMs`. Resolves with { status, body }, status 0 when no answer came.
 */
export async function submitForm(formUrl, values, { timeoutMs = 60_000 } = {}) {
	const body = new FormData();
	values.forEach((value, field) => body.append(`field-${field}`, String(value)));
	try {
		const res = await fetch(formUrl, {
			method: 'POST',
			body,
			signal: AbortSignal.timeout(timeoutMs),
		});
		return { status: res.status, body: await res.text() };
	} catch (error) {
		return { status: 0, body: String(error?.cause?.code ?? error?.message ?? error) };
	}
}
