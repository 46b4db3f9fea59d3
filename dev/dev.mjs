#!/usr/bin/env node
// `npm run dev`: the BasicsEngage sandbox (port 4010, its demo key, a list `list_newsletter`) and a
// real n8n (port 5678; 2.x, or 1.x with N8N_DEV_RUNTIME=v1 as `npm run dev:v1` sets it) with this
// package installed as a community package, its data in .n8n-dev/ (.n8n-dev-v1/), kept between
// runs: it builds the package, provisions n8n (dev/provision.mjs; minutes the first time), creates
// the owner (or logs in), imports the credential "BasicsEngage sandbox" and the missing examples,
// publishes the form and MCP workflows, prints what runs where, then logs every request the
// sandbox gets until Ctrl-C, which stops everything.
// --queue (`npm run dev:queue`): queue mode instead: Redis and Postgres of its own
// (dev/queue-services.mjs), an n8n main process (editor, triggers, forms; it queues executions)
// and N workers that run them, sharing one user folder (one package install, one encryption key)
// and one database; data in .n8n-dev-queue/.
//
// Usage: node dev/dev.mjs [--reset] [--port N] [--sandbox-port N] [--user-folder DIR] [--no-build]
//                         [--watch] [--queue [--workers N]]
//   --reset            delete the n8n data folder first (owner, workflows, executions)
//   --port N, --sandbox-port N   ports (0 = any free port)
//   --user-folder DIR  n8n data folder (queue mode: also Postgres's cluster and Redis's folder)
//   --no-build         use the existing dist/
//   --watch            rebuild on a change under nodes/ or credentials/; n8n reloads the package
//   --workers N        queue mode: how many workers (default 2)
// Module: import { startEnvironment } from './dev/dev.mjs' (test/e2e, test/queue, bench).

import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n, selectRuntime } from './provision.mjs';
import { ensureQueuePackages, startPostgres, startRedis } from './queue-services.mjs';
import { login, setupOwner, startN8n } from './start-n8n.mjs';
import {
	DEMO_API_KEY,
	DEV_OWNER,
	NEWSLETTER_LIST,
	REPO_DIR,
	SANDBOX_CREDENTIAL,
	activateWorkflow,
	importCredential,
	importWorkflows,
	isPublished,
	mcpUrl,
	readExamples,
	restClient,
	waitForForm,
	waitForMcp,
} from './n8n-setup.mjs';

const require = createRequire(import.meta.url);

export const DEFAULT_N8N_PORT = 5678;
export const DEFAULT_SANDBOX_PORT = 4010;
// n8n 1.x cannot open a database n8n 2.x has migrated, so each line keeps its own data folder
export const DEFAULT_USER_FOLDER = path.join(
	REPO_DIR,
	selectRuntime().name === 'v1' ? '.n8n-dev-v1' : '.n8n-dev',
);
export const DEFAULT_QUEUE_USER_FOLDER = path.join(REPO_DIR, '.n8n-dev-queue');
export const DEFAULT_WORKERS = 2;

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
				`could not create the owner (${setupError.message}) nor log in as ${owner.email} (${loginError.message}). Start over with \`npm run dev -- --reset\`.`,
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
 * @param {string} [options.packageDir] the built package to install (default: this repository)
 * @param {string} [options.userFolder] n8n data folder (default .n8n-dev)
 * @param {object | null} [options.owner] owner to create or log in as; null: leave the instance
 *   without an owner (the setup form then asks for one) and do not publish the form and MCP
 *   workflows
 * @param {'missing' | 'always'} [options.importExamples] import the example workflows when they
 *   are missing (default; keeps edits made in the editor) or every time
 * @param {(message: string) => void} [options.onProgress]
 * @param {(line: string) => void} [options.onN8nLog]
 * @param {(entry: object) => void} [options.onSandboxResponse]
 * @param {{ workers?: number, workerArgs?: string[], env?: Record<string, string> }} [options.queue]
 *   queue mode: Redis and Postgres of its own (in <userFolder>/redis and <userFolder>/postgres),
 *   the n8n main process and `workers` n8n workers (default 2), all with `env` added
 * @param {Record<string, string>} [options.n8nEnv] more environment for n8n
 */
export async function startEnvironment({
	n8nPort,
	sandboxPort = DEFAULT_SANDBOX_PORT,
	sandboxOptions = {},
	packageDir = REPO_DIR,
	userFolder = DEFAULT_USER_FOLDER,
	owner = DEV_OWNER,
	importExamples = 'missing',
	onProgress = say,
	onN8nLog,
	onSandboxResponse,
	queue,
	n8nEnv = {},
} = {}) {
	const { startSandbox } = require('../test/sandbox/server.js');
	const started = { workers: [] }; // sandbox, n8n, workers, redis, postgres
	const stop = async () => {
		// n8n first (workers finish their running executions), then what n8n needs, then the sandbox
		await Promise.allSettled([started.n8n?.stop(), ...started.workers.map((w) => w.stop())]);
		await Promise.allSettled([started.redis?.stop(), started.postgres?.stop()]);
		await started.sandbox?.close();
	};
	try {
		started.sandbox = await startSandbox({
			port: sandboxPort,
			lists: [NEWSLETTER_LIST],
			onResponse: onSandboxResponse,
			...sandboxOptions,
		}).catch((error) => {
			if (error.code !== 'EADDRINUSE') throw error;
			throw new Error(
				`port ${sandboxPort} is in use (another sandbox or \`npm run dev\`?); pick another with --sandbox-port`,
			);
		});
		const { sandbox } = started;
		onProgress(`sandbox listening on ${sandbox.baseUrl}`);

		const info = await provisionN8n({ onProgress: (m) => onProgress(`n8n install: ${m}`) });
		const queueEnv = queue
			? await startQueueServices(started, { userFolder, queue, onProgress })
			: {};
		started.n8n = await startN8n({
			port: n8nPort,
			userFolder,
			communityPackageDir: packageDir,
			env: { ...n8nEnv, ...queueEnv },
			onProgress,
			onLog: onN8nLog,
		});
		const { n8n } = started;
		// workers after the main process: it has run the database migrations and installed the package
		if (queue)
			started.workers = await startWorkers({
				count: queue.workers ?? DEFAULT_WORKERS,
				userFolder,
				queueEnv,
				args: queue.workerArgs,
				onProgress,
			});

		const session = owner ? await ownerSession(n8n.url, owner) : undefined;
		if (session)
			onProgress(session.created ? `owner ${owner.email} created` : `logged in as ${owner.email}`);
		const rest = session ? restClient(n8n.url, session.cookie) : undefined;

		// The credential always follows the sandbox's address (and the demo key).
		await importCredential(n8n, { apiKey: DEMO_API_KEY, baseUrl: sandbox.baseUrl });
		onProgress(`credential "${SANDBOX_CREDENTIAL.name}" -> ${sandbox.baseUrl}`);

		const examples = readExamples();
		for (const example of examples)
			example.imported =
				importExamples === 'always' || !rest || !(await workflowExists(rest, example.id));
		const missing = examples.filter((e) => e.imported);
		if (missing.length > 0) {
			await importWorkflows(n8n, missing);
			for (const example of missing) onProgress(`imported workflow "${example.name}"`);
		}
		// Workflows with a form or an MCP server only work once published.
		const live = (e) => e.formPath || e.mcpPath;
		for (const example of examples.filter((e) => live(e) && e.imported && rest)) {
			await activateWorkflow(rest, example.id);
			if (example.formPath) {
				await waitForForm(`${n8n.url}/form/${example.formPath}`);
				onProgress(`published "${example.name}": its form is live`);
			} else {
				await waitForMcp(mcpUrl(n8n.url, example.mcpPath));
				onProgress(`published "${example.name}": its MCP server is live`);
			}
		}
		for (const example of examples.filter((e) => live(e) && rest))
			example.published = isPublished(await rest.get(`/rest/workflows/${example.id}`));
		return { ...started, sandbox, n8n, info, cookie: session?.cookie, rest, examples, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

/** The encryption key n8n keeps in <userFolder>/.n8n/config, or a new one for a new folder. */
function encryptionKeyFor(userFolder) {
	try {
		const { encryptionKey } = JSON.parse(
			fs.readFileSync(path.join(userFolder, '.n8n', 'config'), 'utf8'),
		);
		if (encryptionKey) return encryptionKey;
	} catch {
		// a new user folder: n8n writes the key we give it into .n8n/config
	}
	return crypto.randomBytes(24).toString('base64');
}

/**
 * Redis and Postgres for queue mode, into `started`; returns the settings every n8n process of
 * the setup gets (main and workers alike).
 */
async function startQueueServices(started, { userFolder, queue, onProgress }) {
	await ensureQueuePackages({ onProgress });
	await fsp.mkdir(userFolder, { recursive: true });
	[started.redis, started.postgres] = await Promise.all([
		startRedis({ dir: path.join(userFolder, 'redis'), onProgress }),
		startPostgres({ dataDir: path.join(userFolder, 'postgres'), onProgress }),
	]);
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: started.redis.host,
		QUEUE_BULL_REDIS_PORT: String(started.redis.port),
		...started.postgres.n8nEnv,
		// a worker runs 10 executions at once: with n8n's default pool of 2, bursts on a busy
		// machine failed credential reads (docs/running-at-scale.md)
		DB_POSTGRESDB_POOL_SIZE: '10',
		// one key for every process (they share the user folder and its .n8n/config too)
		N8N_ENCRYPTION_KEY: encryptionKeyFor(userFolder),
		// editor ("manual") runs go to the workers too, as they will by default in n8n 3
		OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
		// Keep finished jobs in Redis a while (n8n's default: remove at once): the main process waits
		// on Bull's job.finished() per job, for ever for a job already removed, and then takes its
		// whole 30 s shutdown timeout to stop (seen after bursts; see dev/README.md).
		N8N_EXECUTIONS_QUEUE_KEEP_LAST_COMPLETED: '1000',
		N8N_EXECUTIONS_QUEUE_KEEP_LAST_FAILED: '1000',
		...(queue.env ?? {}),
	};
}

/**
 * `count` n8n workers on the shared user folder: each with its own log (n8n-worker-<i>.log),
 * health port, task broker port and event log file.
 */
async function startWorkers({ count, userFolder, queueEnv, args = [], onProgress }) {
	const settled = await Promise.allSettled(
		Array.from({ length: count }, (_, index) => {
			const name = `worker-${index + 1}`;
			return startN8n({
				command: 'worker',
				args,
				userFolder,
				logFile: path.join(userFolder, `n8n-${name}.log`),
				env: { ...queueEnv, N8N_EVENTBUS_LOGWRITER_LOGBASENAME: `n8nEventLog-${name}` },
				onProgress: (m) => onProgress(`${name}: ${m}`),
			}).then((worker) => Object.assign(worker, { name }));
		}),
	);
	const workers = settled.filter((r) => r.status === 'fulfilled').map((r) => r.value);
	const failed = settled.find((r) => r.status === 'rejected');
	if (failed) {
		await Promise.allSettled(workers.map((w) => w.stop()));
		throw failed.reason;
	}
	return workers;
}

function localhost(url) {
	return url.replace('//127.0.0.1:', '//localhost:');
}

function banner({ sandbox, n8n, examples, workers = [], redis, postgres }, owner) {
	const editor = localhost(n8n.url);
	const rel = (p) => (p.startsWith(REPO_DIR + path.sep) ? path.relative(REPO_DIR, p) : p);
	const queueLines = workers.length
		? [
				`  queue mode:           the main process below takes the form and the editor; ${workers.length} workers run the executions`,
				...workers.map(
					(w) =>
						`    ${`n8n ${w.name}:`.padEnd(20)}pid ${w.pid}, health ${w.url}/healthz, log ${rel(w.logFile)}`,
				),
				`    Redis (job queue):  ${redis.host}:${redis.port} (log ${rel(redis.logFile)})`,
				`    Postgres:           ${postgres.host}:${postgres.port}, database "${postgres.database}", user "${postgres.user}" (password in ${rel(postgres.dataDir)}.password)`,
			]
		: [];
	const unpublished = (e) =>
		e.published === false ? ' (not published: publish the workflow in the editor)' : '';
	const lines = [
		'',
		'================ BasicsEngage dev environment is running ================',
		...queueLines,
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
					`    ${`${e.formName.toLowerCase()}:`.padEnd(20)}${editor}/form/${e.formPath}${unpublished(e)}`,
			),
		...examples
			.filter((e) => e.mcpPath)
			.map(
				(e) =>
					`    MCP server:         ${mcpUrl(editor, e.mcpPath)} (Streamable HTTP)${unpublished(e)}`,
			),
		`    data and log:       ${rel(n8n.userFolder)}/ (${rel(n8n.logFile)})`,
		`  BasicsEngage sandbox: ${localhost(sandbox.baseUrl)}`,
		`    API key:            ${DEMO_API_KEY}`,
		`    template:           tmpl_welcome (variables firstName, company)`,
		`    verified senders:   ${sandbox.options.verifiedSenders?.join(', ') ?? 'any'}`,
		`    list:               ${NEWSLETTER_LIST.listId} ("${NEWSLETTER_LIST.name}")`,
		`Sandbox requests are logged below. Press Ctrl-C to stop n8n${workers.length ? ', its workers, Redis, Postgres' : ''} and the sandbox.`,
		'=========================================================================',
		'',
	];
	console.log(lines.join('\n'));
}

// --watch ------------------------------------------------------------------------------------
// n8n reloads a package's nodes and credentials by itself when its files change, if started with
// N8N_DEV_RELOAD=true (and NODE_ENV unset or "development"): LoadNodesAndCredentials.setupHotReload
// in n8n 2.41.1 and 1.123.81 watches every loaded package folder, community packages included, and
// logs "Hot reload triggered for <package>". So --watch rebuilds the package on a change under
// nodes/ or credentials/ and copies dist/ over the installed copy, file by file (the folders stay,
// so n8n's watch on them does too); n8n does the rest, without a restart.

const WATCHED = ['nodes', 'credentials'];
let lastSave;

/** Copies `src` over `dst` in place: changed files are overwritten, files gone are removed. */
function syncInPlace(src, dst) {
	fs.mkdirSync(dst, { recursive: true });
	const entries = fs.readdirSync(src, { withFileTypes: true });
	const names = new Set(entries.map((e) => e.name));
	for (const name of fs.readdirSync(dst)) {
		if (!names.has(name)) fs.rmSync(path.join(dst, name), { recursive: true, force: true });
	}
	for (const entry of entries) {
		const from = path.join(src, entry.name);
		const to = path.join(dst, entry.name);
		if (entry.isDirectory()) syncInPlace(from, to);
		else fs.copyFileSync(from, to);
	}
}

function watchSources({ installDir, isStopping }) {
	let timer;
	let running = false;
	let again = false;
	const changed = new Set();
	const rebuild = async () => {
		if (running) {
			again = true;
			return;
		}
		running = true;
		do {
			again = false;
			const files = [...changed];
			changed.clear();
			const t0 = Date.now();
			say(
				`--watch: ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''} changed: rebuilding...`,
			);
			try {
				await buildPackage();
				if (isStopping()) break;
				lastSave = Date.now();
				syncInPlace(path.join(REPO_DIR, 'dist'), path.join(installDir, 'dist'));
				say(
					`--watch: rebuilt in ${((Date.now() - t0) / 1000).toFixed(1)}s and copied into n8n; n8n reloads it...`,
				);
			} catch (error) {
				say(
					`--watch: ${error.message}; n8n keeps the previous build. Fix the error and save again.`,
				);
			}
		} while (again && !isStopping());
		running = false;
	};
	for (const dir of WATCHED) {
		fs.watch(path.join(REPO_DIR, dir), { recursive: true }, (event, file) => {
			if (isStopping()) return;
			changed.add(path.join(dir, String(file ?? '')));
			clearTimeout(timer);
			timer = setTimeout(rebuild, 300);
		});
	}
	say(
		`--watch: watching ${WATCHED.map((d) => `${d}/`).join(' and ')}; a change rebuilds the package and n8n reloads it`,
	);
}

/** n8n's log lines about its hot reload, for --watch. */
function reloadReporter(line) {
	if (/Hot reload triggered for n8n-nodes-basicsengage/.test(line)) {
		const after = lastSave ? ` ${((Date.now() - lastSave) / 1000).toFixed(1)}s after the copy` : '';
		say(
			`--watch: n8n reloaded the package${after}. In the editor, reload the page to see changed parameters.`,
		);
	} else if (/Hot reload failed for n8n-nodes-basicsengage/.test(line)) {
		say(
			'--watch: n8n could not reload the package (see its log); restart `npm run dev` if it persists.',
		);
	}
}

async function main(argv) {
	const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
	if (argv.includes('--help') || argv.includes('-h')) {
		console.log(
			'Usage: npm run dev [-- --reset] [--port N] [--sandbox-port N] [--user-folder DIR] [--no-build] [--watch] [--queue [--workers N]]',
		);
		return;
	}
	const queue = argv.includes('--queue')
		? { workers: Number(opt('--workers') ?? DEFAULT_WORKERS) }
		: undefined;
	const watch = argv.includes('--watch');
	const refusal =
		(queue &&
			!(Number.isInteger(queue.workers) && queue.workers >= 1) &&
			'--workers needs a whole number of at least 1') ||
		(watch && queue && '--watch runs with one n8n process only (not with --queue)') ||
		(queue &&
			selectRuntime().name !== 'v2' &&
			'--queue runs n8n 2.x only (not with N8N_DEV_RUNTIME=v1)') ||
		(!fs.existsSync(path.join(REPO_DIR, 'node_modules')) &&
			'node_modules is missing: run `npm ci` first.');
	if (refusal) {
		console.error(`[dev] ${refusal}`);
		process.exit(1);
	}
	const userFolder = path.resolve(
		opt('--user-folder') ?? (queue ? DEFAULT_QUEUE_USER_FOLDER : DEFAULT_USER_FOLDER),
	);
	const n8nPort =
		opt('--port') !== undefined ? Number(opt('--port')) || undefined : DEFAULT_N8N_PORT;
	const sandboxPort =
		opt('--sandbox-port') !== undefined ? Number(opt('--sandbox-port')) : DEFAULT_SANDBOX_PORT;

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
		console.log(
			`\n[dev] ${signal}: stopping n8n${queue ? ', its workers, Redis, Postgres' : ''} and the sandbox...`,
		);
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
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
		process.on(signal, () => void shutdown(signal));

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
		queue,
		...(watch ? { n8nEnv: { N8N_DEV_RELOAD: 'true' }, onN8nLog: reloadReporter } : {}),
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
	if (watch)
		watchSources({ installDir: env.n8n.communityPackage.installDir, isStopping: () => stopping });

	for (const proc of [env.n8n, ...env.workers]) {
		proc.process.on('exit', async (code, signal) => {
			if (stopping) return;
			stopping = true;
			console.error(
				`[dev] n8n${proc.name ? ` ${proc.name}` : ''} exited unexpectedly (${signal ?? `code ${code}`}); see ${proc.logFile}. Stopping the rest...`,
			);
			await env.stop();
			process.exit(1);
		});
	}
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
