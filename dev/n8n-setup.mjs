// Puts the example workflows and a sandbox credential into a running n8n (started with
// dev/start-n8n.mjs), publishes them and waits for their triggers. Shared by `npm run dev`
// (dev/dev.mjs) and the end-to-end tests (test/e2e/). Plain Node ESM, no dependencies.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
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
			const mcp = workflow.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.mcpTrigger');
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
