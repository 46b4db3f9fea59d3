#!/usr/bin/env node
// `npm run dev`: the BasicsEngage sandbox and a real n8n (2.x; 1.x with N8N_DEV_RUNTIME=v1, as
// `npm run dev:v1` sets it) with this package installed, the sandbox credential and the example
// workflows, in one command. Ctrl-C stops everything.
//
//   1. builds the package (`npm run build`),
//   2. starts the sandbox (test/sandbox) on port 4010 with its demo key and a list
//      `list_newsletter` for the sign-up example,
//   3. provisions n8n (dev/provision.mjs: a fitting Node + the pinned n8n, cached; the first time
//      takes several minutes, with progress lines),
//   4. starts n8n on port 5678 with the package installed as a community package
//      (dev/start-n8n.mjs), its data in .n8n-dev/ (.n8n-dev-v1/ for 1.x; kept between runs),
//   5. creates the owner account (or logs in), imports the credential "BasicsEngage sandbox"
//      and the example workflows (examples/*.json) when they are missing, and publishes the
//      sign-up form workflow,
//   6. prints what runs where, then logs every request the sandbox gets until Ctrl-C, with the
//      sandbox's summary of what an answer does not show (new profile IDs, a sent campaign's
//      recipients).
//
// Usage: node dev/dev.mjs [--reset] [--port N] [--sandbox-port N] [--user-folder DIR] [--no-build]
//   --reset            delete the n8n data folder first (owner, workflows, executions)
//   --port N           n8n port (default 5678; 0 = any free port)
//   --sandbox-port N   sandbox port (default 4010; 0 = any free port)
//   --user-folder DIR  n8n data folder (default .n8n-dev, or .n8n-dev-v1, in the repository)
//   --no-build         use the existing dist/
//
// Module: import { startEnvironment } from './dev/dev.mjs' (used by test/e2e).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n, selectRuntime } from './provision.mjs';
import { login, setupOwner, startN8n } from './start-n8n.mjs';
import {
	DEMO_API_KEY,
	DEV_OWNER,
	NEWSLETTER_LIST,
	REPO_DIR,
	SANDBOX_CREDENTIAL,
	activateWorkflow,
	importCredential,
	isPublished,
	readExamples,
	restClient,
	waitForForm,
} from './n8n-setup.mjs';

const require = createRequire(import.meta.url);

export const DEFAULT_N8N_PORT = 5678;
export const DEFAULT_SANDBOX_PORT = 4010;
// n8n 1.x cannot open a database n8n 2.x has migrated, so each line keeps its own data folder
export const DEFAULT_USER_FOLDER = path.join(
	REPO_DIR,
	selectRuntime().name === 'v1' ? '.n8n-dev-v1' : '.n8n-dev',
);

const say = (message) => console.log(`[dev] ${message}`);

/** `npm run build`, output shown. */
export function buildPackage() {
	return new Promise((resolve, reject) => {
		const child = spawn('npm', ['run', 'build', '--silent'], { cwd: REPO_DIR, stdio: 'inherit' });
		child.on('error', reject);
		child.on('close', (code, signal) =>
			code === 0
				? resolve()
				: reject(new Error(`npm run build failed (${signal ?? `exit ${code}`})`)),
		);
	});
}

async function ownerSession(url, owner) {
	try {
		return { ...(await setupOwner(url, owner)), created: true };
	} catch (setupError) {
		try {
			return { ...(await login(url, owner)), created: false };
		} catch (loginError) {
			throw new Error(
				`could not create the owner (${setupError.message}) nor log in as ${owner.email} (${loginError.message}). ` +
					'Start over with `npm run dev -- --reset`.',
			);
		}
	}
}

async function workflowExists(rest, id) {
	try {
		await rest.get(`/rest/workflows/${id}`);
		return true;
	} catch (error) {
		if (error.status === 404) return false;
		throw error;
	}
}

/**
 * Starts the sandbox and n8n, and puts the credential and the examples into n8n.
 * @param {object} [options]
 * @param {number} [options.n8nPort] default: 5678 when free, else any free port
 * @param {number} [options.sandboxPort] default 4010 (0 = any free port)
 * @param {object} [options.sandboxOptions] more startSandbox() options (e.g. dailyLimit)
 * @param {string} [options.userFolder] n8n data folder (default .n8n-dev)
 * @param {object | null} [options.owner] owner to create or log in as; null: leave the instance
 *   without an owner (the setup form then asks for one) and do not publish the form workflow
 * @param {'missing' | 'always'} [options.importExamples] import the example workflows when they
 *   are missing (default; keeps edits made in the editor) or every time
 * @param {(message: string) => void} [options.onProgress]
 * @param {(line: string) => void} [options.onN8nLog]
 * @param {(entry: object) => void} [options.onSandboxResponse]
 */
export async function startEnvironment({
	n8nPort,
	sandboxPort = DEFAULT_SANDBOX_PORT,
	sandboxOptions = {},
	userFolder = DEFAULT_USER_FOLDER,
	owner = DEV_OWNER,
	importExamples = 'missing',
	onProgress = say,
	onN8nLog,
	onSandboxResponse,
} = {}) {
	const { startSandbox } = require('../test/sandbox/server.js');
	const started = { sandbox: undefined, n8n: undefined };
	const stop = async () => {
		await Promise.allSettled([started.n8n?.stop(), started.sandbox?.close()]);
	};
	try {
		started.sandbox = await startSandbox({
			port: sandboxPort,
			lists: [NEWSLETTER_LIST],
			onResponse: onSandboxResponse,
			...sandboxOptions,
		}).catch((error) => {
			if (error.code === 'EADDRINUSE') {
				throw new Error(
					`port ${sandboxPort} is in use (another sandbox or \`npm run dev\`?); pick another with --sandbox-port`,
				);
			}
			throw error;
		});
		const { sandbox } = started;
		onProgress(`sandbox listening on ${sandbox.baseUrl}`);

		const info = await provisionN8n({ onProgress: (m) => onProgress(`n8n install: ${m}`) });
		started.n8n = await startN8n({
			port: n8nPort,
			userFolder,
			communityPackageDir: REPO_DIR,
			onProgress,
			onLog: onN8nLog,
		});
		const { n8n } = started;

		const session = owner ? await ownerSession(n8n.url, owner) : undefined;
		if (session)
			onProgress(session.created ? `owner ${owner.email} created` : `logged in as ${owner.email}`);
		const rest = session ? restClient(n8n.url, session.cookie) : undefined;

		// The credential always follows the sandbox's address (and the demo key).
		await importCredential(n8n, { apiKey: DEMO_API_KEY, baseUrl: sandbox.baseUrl });
		onProgress(`credential "${SANDBOX_CREDENTIAL.name}" -> ${sandbox.baseUrl}`);

		const examples = readExamples();
		for (const example of examples) {
			const exists =
				importExamples === 'missing' && rest ? await workflowExists(rest, example.id) : false;
			if (exists) {
				example.imported = false;
				continue;
			}
			const res = await n8n.runCli(['import:workflow', `--input=${example.file}`]);
			if (res.code !== 0)
				throw new Error(`importing ${example.file} failed:\n${res.stdout}\n${res.stderr}`);
			example.imported = true;
			onProgress(`imported workflow "${example.name}"`);
		}
		for (const example of examples.filter((e) => e.formPath && e.imported && rest)) {
			await activateWorkflow(rest, example.id);
			await waitForForm(`${n8n.url}/form/${example.formPath}`);
			onProgress(`published "${example.name}": its form is live`);
		}
		for (const example of examples.filter((e) => e.formPath && rest)) {
			const workflow = await rest.get(`/rest/workflows/${example.id}`);
			example.published = isPublished(workflow);
		}

		return { sandbox, n8n, info, cookie: session?.cookie, rest, examples, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

function localhost(url) {
	return url.replace('//127.0.0.1:', '//localhost:');
}

function banner({ sandbox, n8n, examples }, owner) {
	const editor = localhost(n8n.url);
	const rel = (p) => (p.startsWith(REPO_DIR + path.sep) ? path.relative(REPO_DIR, p) : p);
	const lines = [
		'',
		'================ BasicsEngage dev environment is running ================',
		`  n8n ${n8n.n8nVersion} editor:   ${editor}`,
		`    owner login:        ${owner.email} / ${owner.password}`,
		`    BasicsEngage node:  ${n8n.communityPackage.name}@${n8n.communityPackage.version} (community package, built from this repo)`,
		`    credential:         "${SANDBOX_CREDENTIAL.name}" (points at the sandbox)`,
		'    example workflows:',
		...examples.map((e) => `      - ${e.name}: ${editor}/workflow/${e.id}`),
		...examples
			.filter((e) => e.formPath)
			.map(
				(e) =>
					`    sign-up form:       ${editor}/form/${e.formPath}` +
					(e.published === false ? ' (not published: publish the workflow in the editor)' : ''),
			),
		`    data and log:       ${rel(n8n.userFolder)}/ (${rel(n8n.logFile)})`,
		`  BasicsEngage sandbox: ${localhost(sandbox.baseUrl)}`,
		`    API key:            ${DEMO_API_KEY}`,
		`    template:           tmpl_welcome (variables firstName, company)`,
		`    verified senders:   ${sandbox.options.verifiedSenders?.join(', ') ?? 'any'}`,
		`    list:               ${NEWSLETTER_LIST.listId} ("${NEWSLETTER_LIST.name}")`,
		'Sandbox requests are logged below. Press Ctrl-C to stop n8n and the sandbox.',
		'=========================================================================',
		'',
	];
	console.log(lines.join('\n'));
}

async function main(argv) {
	const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
	if (argv.includes('--help') || argv.includes('-h')) {
		console.log(
			'Usage: npm run dev [-- --reset] [--port N] [--sandbox-port N] [--user-folder DIR] [--no-build]',
		);
		return;
	}
	const userFolder = path.resolve(opt('--user-folder') ?? DEFAULT_USER_FOLDER);
	const n8nPort =
		opt('--port') !== undefined ? Number(opt('--port')) || undefined : DEFAULT_N8N_PORT;
	const sandboxPort =
		opt('--sandbox-port') !== undefined ? Number(opt('--sandbox-port')) : DEFAULT_SANDBOX_PORT;

	if (!fs.existsSync(path.join(REPO_DIR, 'node_modules'))) {
		console.error('[dev] node_modules is missing: run `npm ci` first.');
		process.exit(1);
	}

	// Ctrl-C / SIGTERM at any point: stop what has been started, then exit.
	let env;
	let starting;
	let stopping = false;
	const shutdown = async (signal) => {
		if (stopping) {
			console.log(`[dev] ${signal} again: forced exit`);
			process.exit(130);
		}
		stopping = true;
		console.log(`\n[dev] ${signal}: stopping n8n and the sandbox...`);
		// still starting: startEnvironment() cleans up after itself when n8n dies mid-start
		const running =
			env ??
			(starting &&
				(await Promise.race([
					starting.catch(() => undefined),
					new Promise((r) => setTimeout(r, 30_000)),
				])));
		await running?.stop();
		console.log('[dev] stopped.');
		process.exit(0);
	};
	process.on('SIGINT', () => void shutdown('SIGINT'));
	process.on('SIGTERM', () => void shutdown('SIGTERM'));
	process.on('SIGHUP', () => void shutdown('SIGHUP'));

	const t0 = Date.now();
	if (argv.includes('--reset')) {
		say(`--reset: deleting ${userFolder}`);
		await fsp.rm(userFolder, { recursive: true, force: true });
	}
	if (!argv.includes('--no-build')) {
		say('building the package (npm run build)...');
		await buildPackage();
	}
	if (stopping) return;

	starting = startEnvironment({
		n8nPort,
		sandboxPort,
		userFolder,
		onSandboxResponse: ({ method, path: p, status, durationMs, summary }) =>
			console.log(
				`[sandbox] ${new Date().toISOString()} ${method} ${p} ${status} ${durationMs}ms${summary === undefined ? '' : ` ${summary}`}`,
			),
	});
	try {
		env = await starting;
	} catch (error) {
		if (stopping) return; // Ctrl-C during the start: shutdown() exits
		throw error;
	}
	if (stopping) return;
	banner(env, DEV_OWNER);
	say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);

	env.n8n.process.on('exit', async (code, signal) => {
		if (stopping) return;
		console.error(
			`[dev] n8n exited unexpectedly (${signal ?? `code ${code}`}); see ${env.n8n.logFile}`,
		);
		await env.sandbox.close();
		process.exit(1);
	});
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
	main(process.argv.slice(2)).catch((error) => {
		const hint = /^Port \d+ is already in use/.test(error.message)
			? ' (another n8n, or `npm run dev` already running? Stop it, or pick another port with `npm run dev -- --port N`)'
			: '';
		console.error(`[dev] FAILED: ${error.message}${hint}`);
		process.exit(1);
	});
}
