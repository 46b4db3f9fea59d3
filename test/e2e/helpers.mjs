// Shared by the end-to-end tests: a temp n8n environment (sandbox + n8n + examples), Chromium, and
// `npm run dev` run as a terminal runs it.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';

import { startEnvironment } from '../../dev/dev.mjs';
import {
	activateWorkflow,
	readExamples,
	REPO_DIR,
	SANDBOX_CREDENTIAL,
} from '../../dev/n8n-setup.mjs';
import { getExecution } from './executions.mjs';
import { snapshotTree, stillRunning } from './processes.mjs';

export { REPO_DIR };
export const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_DIR, 'package.json'), 'utf8'));
/** The node's type name in n8n: `<package name>.<node name>`. */
export const NODE_TYPE = `${PACKAGE.name}.basicsEngage`;
/** A node's reference to the sandbox credential. */
export const CREDENTIALS = {
	basicsEngageApi: { id: SANDBOX_CREDENTIAL.id, name: SANDBOX_CREDENTIAL.name },
};

/** Debian's chromium (test/e2e/prepare.mjs installs it); never a downloaded browser. */
const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

// A temp folder, so a test run never changes tracked files (`npm run screenshots`: docs/images).
export const SCREENSHOT_DIR = path.resolve(
	process.env.E2E_SCREENSHOT_DIR ||
		path.join(os.tmpdir(), `basicsengage-e2e-screenshots-${process.env.N8N_DEV_RUNTIME || 'v2'}`),
);

export const log = (message) => process.stderr.write(`[e2e] ${message}\n`);

/** Sandbox and n8n on free ports in a temp folder, credential and examples imported. */
export async function startTestEnvironment(options = {}) {
	const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-e2e-'));
	// Postgres (queue mode) runs as the postgres user when we are root: it must reach its folder
	await fsp.chmod(tmp, 0o711);
	let env;
	try {
		env = await startEnvironment({
			sandboxPort: 0,
			userFolder: path.join(tmp, 'n8n'),
			importExamples: 'always',
			onProgress: log,
			...options,
		});
	} catch (error) {
		if (!process.env.E2E_KEEP) await fsp.rm(tmp, { recursive: true, force: true });
		throw error;
	}
	return {
		...env,
		tmp,
		n8nDir: env.info.n8nDir,
		async stop() {
			await env.stop();
			if (process.env.E2E_KEEP) log(`kept ${tmp} (logs: ${tmp}/n8n/*.log)`);
			else await fsp.rm(tmp, { recursive: true, force: true });
		},
	};
}

/**
 * A workflow of `nodes` (typeVersion 1 unless set): a node with `link: [target, type]` feeds that
 * node on that connection type, the others are chained in order on `main`.
 */
export function buildWorkflow(id, name, nodes) {
	const connections = {};
	const into = (from, node, type) => (connections[from] = { [type]: [[{ node, type, index: 0 }]] });
	const main = nodes.filter((node) => !node.link).map((node) => node.name);
	main.slice(1).forEach((target, at) => into(main[at], target, 'main'));
	for (const { name, link } of nodes) if (link) into(name, ...link);
	return {
		id,
		name: `BasicsEngage e2e: ${name}`,
		active: false,
		settings: { executionOrder: 'v1' },
		connections,
		// every node a webhookId: the triggers and Send and Wait need one, the others ignore it
		nodes: nodes.map(({ link, ...node }, at) => ({
			id: randomUUID(),
			webhookId: randomUUID(),
			typeVersion: 1,
			position: [at * 220, 0],
			parameters: {},
			...node,
		})),
	};
}

/** Calls `check` every 100 ms until it gives something truthy, and returns that. */
export async function until(check, what, timeoutMs = 30_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > deadline) {
			throw new Error(`after ${timeoutMs} ms: ${typeof what === 'function' ? what() : what}`);
		}
		await new Promise((r) => setTimeout(r, 100));
	}
}

/**
 * Saves a workflow through n8n's REST API (each n8n CLI call boots n8n: seconds of CPU) and
 * publishes it unless `publish` is false. n8n 1.x gives it an id of its own, set on `workflow`.
 */
export async function importWorkflow(env, workflow, { publish = true } = {}) {
	const { id, name, nodes, connections, settings, pinData } = workflow;
	const body = { id, name, nodes, connections, settings, pinData, active: false };
	workflow.id = (await env.rest.post('/rest/workflows', body)).id;
	if (publish) await activateWorkflow(env.rest, workflow.id);
}

/**
 * Runs a saved workflow by hand from its manual trigger, as the editor's Execute Workflow button
 * does (n8n 1.x takes the workflow in the body, 2.x the saved one), and waits for the run:
 * `getExecution`'s execution. Unlike `n8n execute`, it boots no second n8n.
 */
export async function runByHand({ rest, n8nDir }, workflowId) {
	const workflowData = await rest.get(`/rest/workflows/${workflowId}`);
	const trigger = workflowData.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
	const body = { workflowData, triggerToStartFrom: { name: trigger.name } };
	const { executionId } = await rest.post(`/rest/workflows/${workflowId}/run`, body);
	for (;;) {
		await new Promise((resolve) => setTimeout(resolve, 300));
		const run = await getExecution(rest, executionId, { n8nDir });
		if (!['new', 'running'].includes(run.status)) return run;
	}
}

/**
 * A copy of an example as a workflow of its own: `id`, `(label)` after its name, its trigger on
 * `triggerPath`, its webhook ids ending in `tag`; edit its nodes with `node(name)`.
 */
export function exampleVariant(exampleId, { id, label, triggerPath, tag = id.slice(-4) }) {
	const workflow = structuredClone(readExamples().find((e) => e.id === exampleId).workflow);
	Object.assign(workflow, { id, name: `${workflow.name} (${label})` });
	for (const node of workflow.nodes) {
		if (node.webhookId) node.webhookId = `${node.webhookId.slice(0, -4)}${tag}`;
		if (node.type === '@n8n/n8n-nodes-langchain.mcpTrigger') node.parameters.path = triggerPath;
		if (node.type === 'n8n-nodes-base.formTrigger') {
			node.parameters.options = { ...node.parameters.options, path: triggerPath };
		}
	}
	return { workflow, node: (name) => workflow.nodes.find((n) => n.name === name) };
}

/** The official MCP client connected over Streamable HTTP, as Claude Desktop or any client does. */
export async function connectMcp(url, name = 'basicsengage-e2e') {
	const client = new Client({ name, version: '1.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url));
	await client.connect(transport);
	return {
		client,
		async close() {
			await transport.terminateSession().catch(() => {});
			await client.close().catch(() => {});
		},
	};
}

/** Chromium with a fresh profile (user data dir), 1440x900. */
export async function launchBrowser() {
	if (!fs.existsSync(CHROMIUM)) {
		throw new Error(
			`${CHROMIUM} not found: run \`node test/e2e/prepare.mjs\` (installs Debian's chromium) or set E2E_CHROMIUM`,
		);
	}
	const userDataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
		viewport: { width: 1440, height: 900 },
		locale: 'en-US',
		timezoneId: 'UTC',
	});
	return {
		context,
		async close() {
			await context.close().catch(() => {});
			await fsp.rm(userDataDir, { recursive: true, force: true });
		},
	};
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * `npm run <script> -- <args>` on free ports and `userFolder`, as a terminal runs it: in a process
 * group of its own (Ctrl-C is SIGINT to that group), its stdout and stderr collected in `output`.
 */
export function spawnDev({ script = 'dev', args = [], userFolder, cwd = REPO_DIR }) {
	const name = `npm run ${script}`;
	const flags = [...args, '--port', '0', '--sandbox-port', '0', '--user-folder', userFolder];
	const child = spawn('npm', ['run', script, '--', ...flags], {
		cwd,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const running = () => child.exitCode === null && child.signalCode === null;
	// the end of the output says why it stopped; CI keeps the end of a long log, not its middle
	const ends = () => `its output ends:\n${dev.output.split('\n').slice(-100).join('\n')}`;
	const dev = {
		child,
		output: '',
		/** Resolves with the match once the output matches `pattern`. */
		waitFor: (pattern, timeoutMs) =>
			until(
				() => {
					if (running()) return dev.output.match(pattern);
					throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}); ${ends()}`);
				},
				() => `no ${pattern} in ${name}'s output; ${ends()}`,
				timeoutMs,
			),
		/**
		 * Ctrl-C: SIGINT to the group, as a terminal sends it. Once npm has exited and said
		 * `[dev] stopped.`, resolves with the group's processes (taken before) alive 0.5 s later.
		 */
		async interrupt(timeoutMs = 60_000) {
			const started = snapshotTree(child.pid);
			process.kill(-child.pid, 'SIGINT');
			await until(
				() => !running(),
				() => `${name} did not exit; ${ends()}`,
				timeoutMs,
			);
			if (!dev.output.includes('[dev] stopped.')) {
				throw new Error(`${name} did not say "[dev] stopped."; ${ends()}`);
			}
			await new Promise((r) => setTimeout(r, 500));
			return stillRunning(started);
		},
	};
	child.stdout.on('data', (d) => (dev.output += d));
	child.stderr.on('data', (d) => (dev.output += d));
	return dev;
}

/**
 * test/e2e/watchdog.mjs: it stops the process trees (`stopTree(pid)`) and removes the folders
 * (`tempDir(prefix)`) once this test process ends, however it ends; `release()` (from afterAll)
 * has it do so now.
 */
export function startWatchdog() {
	const child = spawn(process.execPath, [path.join(HERE, 'watchdog.mjs')], {
		detached: true, // a group of its own: a terminal's Ctrl-C to jest does not reach it
		stdio: ['pipe', 'ignore', 'ignore'],
	});
	child.unref();
	const exited = new Promise((resolve) => child.once('exit', resolve));
	const watchdog = {
		stopTree: (pid) => child.stdin.write(`pid ${pid}\n`),
		tempDir(prefix) {
			const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
			child.stdin.write(`dir ${dir}\n`);
			return dir;
		},
		async release() {
			child.stdin.end();
			await exited;
		},
	};
	return watchdog;
}
