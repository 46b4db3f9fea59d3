#!/usr/bin/env node
// Starts a real n8n server (2.x, or 1.x with N8N_DEV_RUNTIME=v1; from the cache prepared by
// dev/provision.mjs) with a community package installed the way n8n installs one.
//
// How n8n 2.x (2.41.1; unchanged since 2.40.7 but for the API level check below) installs and
// loads community packages, read from its source
// (packages/cli/src/modules/community-packages/community-packages.service.ts,
// community-packages.module.ts, packages/core/src/nodes-loader/scan-directory-for-packages.ts):
//   - The community packages dir is <N8N_USER_FOLDER>/.n8n/nodes (InstanceSettings.nodesDownloadDir),
//     holding a package.json {"name":"installed-nodes","private":true,"dependencies":{...}}.
//   - Installing = `npm pack <name>@<version>`, `tar -xzf <tgz> -C nodes/node_modules/<name>
//     --strip-components=1`, strip devDependencies/peerDependencies/optionalDependencies from
//     the unpacked package.json, then inside that folder `npm install --audit=false --fund=false
//     --bin-links=false --install-strategy=shallow --ignore-scripts=true --package-lock=false`,
//     then record "<name>": "<version>" in nodes/package.json (and rows in the DB when done via UI).
//   - At startup the community-packages module scans nodes/node_modules for `n8n-nodes-*` and
//     `@*/n8n-nodes-*` and loads each with LazyPackageDirectoryLoader: node types are named
//     `<package name>.<node name>`. Peer deps (n8n-workflow) resolve to n8n's own copy via NODE_PATH.
//     A package whose package.json declares `n8n.n8nNodesApiVersion` above n8n's own (1) is skipped
//     with a warning; since 2.41 an install or update through n8n refuses it too. Ours declares 1.
//   N8N_CUSTOM_EXTENSIONS (CustomDirectoryLoader) would instead name the types `CUSTOM.<node>`,
//   which is not what users of the published package get, so it is not used here.
// This module reproduces the install step with a local `npm pack` of the package folder
// instead of a registry download (the rest is identical).
//
// Module: import { startN8n } from './dev/start-n8n.mjs';
//         const n8n = await startN8n({ communityPackageDir: process.cwd() });
//         ...; await n8n.stop();
// CLI:    node dev/start-n8n.mjs [--port 5678] [--user-folder DIR] [--package DIR] [--log FILE]
//         (runs until Ctrl-C; prints the URL and the log file path)

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n, npmCommand, envWithNode } from './provision.mjs';

const DEFAULT_PORT = 5678;
const DEFAULT_BROKER_PORT = 5679;

function defaultProgress(message) {
	process.stderr.write(`[start-n8n] ${message}\n`);
}

function canListen(port, host) {
	return new Promise((resolve) => {
		const server = net.createServer();
		server.unref();
		server.once('error', () => resolve(false));
		server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
	});
}

/** True when nothing listens on `port` on loopback nor on the wildcard address. */
export async function isPortFree(port) {
	return (await canListen(port, '127.0.0.1')) && (await canListen(port, undefined));
}

export async function getFreePort() {
	return await new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.once('error', reject);
		server.listen({ port: 0, host: '127.0.0.1' }, () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

async function pickPort(preferred, taken) {
	if (preferred !== undefined && !taken.has(preferred) && (await isPortFree(preferred))) return preferred;
	for (;;) {
		const port = await getFreePort();
		if (!taken.has(port)) return port;
	}
}

// n8n runs in its own process group (so stop() reaches its task runners too), which also
// means it would outlive this process if this process were killed by a signal. While any n8n
// runs, SIGINT/SIGTERM/SIGHUP first take the n8n groups down, then, unless the host program
// handles the signal itself, the signal is re-raised so this process ends as it would have.
// Services n8n depends on (queue mode's Redis and Postgres, dev/queue-services.mjs) are tracked
// as `last`: a host that handles the signal stops them itself once n8n is down (stopping them
// together with n8n would fail n8n's own shutdown); otherwise they are ended before re-raising.
const runningGroups = new Set();
const lastGroups = new Set();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
function onSignal(signal) {
	for (const kill of runningGroups) kill('SIGTERM');
	// Re-raise only when nobody else handles the signal. (Counting listeners other than this one:
	// a host handler may already have stopped every n8n, which removes this listener meanwhile.)
	if (process.listeners(signal).every((listener) => listener === onSignal)) {
		for (const kill of lastGroups) kill('SIGTERM');
		for (const s of SIGNALS) process.off(s, onSignal);
		process.kill(process.pid, signal);
	}
}
const tracked = () => runningGroups.size + lastGroups.size;
/**
 * Registers a process-group killer for the signal handling above; `last` for a service n8n
 * needs (dev/queue-services.mjs).
 */
export function trackChild(kill, { last = false } = {}) {
	if (tracked() === 0) for (const s of SIGNALS) process.on(s, onSignal);
	(last ? lastGroups : runningGroups).add(kill);
}
export function untrackChild(kill) {
	runningGroups.delete(kill);
	lastGroups.delete(kill);
	if (tracked() === 0) for (const s of SIGNALS) process.off(s, onSignal);
}

function runQuiet(cmd, args, { cwd, env }) {
	return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/**
 * Installs a local package folder into <userFolder>/.n8n/nodes exactly like n8n's
 * CommunityPackagesService.downloadPackage does for a registry package.
 * The package must already be built (its `files`, e.g. dist/, are what gets packed).
 * @returns {{ name: string, version: string, installDir: string, nodesDir: string, tarball: string }}
 */
export async function installCommunityPackage({ packageDir, userFolder, nodeInfo }) {
	const srcPkg = JSON.parse(await fsp.readFile(path.join(packageDir, 'package.json'), 'utf8'));
	const { name } = srcPkg;
	if (!/^(@[^/]+\/)?n8n-nodes-/.test(name)) {
		throw new Error(`n8n only loads community packages named n8n-nodes-* or @scope/n8n-nodes-* (got "${name}")`);
	}
	if (!srcPkg.n8n) throw new Error(`${packageDir}/package.json has no "n8n" section`);
	for (const file of [...(srcPkg.n8n.nodes ?? []), ...(srcPkg.n8n.credentials ?? [])]) {
		if (!fs.existsSync(path.join(packageDir, file))) {
			throw new Error(`${name}: ${file} listed in package.json "n8n" does not exist (build the package first)`);
		}
	}

	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const installDir = path.join(nodesDir, 'node_modules', ...name.split('/'));
	const env = envWithNode(nodeInfo.nodeBinDir, { npm_config_update_notifier: 'false' });
	const npm = npmCommand(nodeInfo.node);

	// nodes/package.json as n8n's ensurePackageJson() creates it
	await fsp.mkdir(nodesDir, { recursive: true });
	const nodesPkgPath = path.join(nodesDir, 'package.json');
	let nodesPkg;
	try {
		nodesPkg = JSON.parse(await fsp.readFile(nodesPkgPath, 'utf8'));
	} catch {
		nodesPkg = { name: 'installed-nodes', private: true, dependencies: {} };
	}

	const packDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-dev-pack-'));
	try {
		// 1. npm pack (n8n: `npm pack <name>@<version>` from the registry)
		const packOut = runQuiet(npm.cmd, [...npm.prefixArgs, 'pack', path.resolve(packageDir), '--pack-destination', packDir, '--json', '--ignore-scripts'], {
			cwd: packDir,
			env,
		});
		const tarball = path.join(packDir, JSON.parse(packOut)[0].filename);

		// 2. unpack into nodes/node_modules/<name>
		await fsp.rm(installDir, { recursive: true, force: true });
		await fsp.mkdir(installDir, { recursive: true });
		runQuiet('tar', ['-xzf', tarball, '-C', installDir, '--strip-components=1'], { cwd: packDir, env });

		// 3. strip dev/peer/optional dependencies
		const pkgJsonPath = path.join(installDir, 'package.json');
		const { devDependencies, peerDependencies, optionalDependencies, ...pkgJson } = JSON.parse(
			await fsp.readFile(pkgJsonPath, 'utf8'),
		);
		await fsp.writeFile(pkgJsonPath, JSON.stringify(pkgJson, null, 2), 'utf8');

		// 4. install its runtime dependencies with n8n's flags
		runQuiet(
			npm.cmd,
			[
				...npm.prefixArgs,
				'install',
				'--audit=false',
				'--fund=false',
				'--bin-links=false',
				'--install-strategy=shallow',
				'--ignore-scripts=true',
				'--package-lock=false',
			],
			{ cwd: installDir, env },
		);

		// 5. record it in nodes/package.json
		nodesPkg.dependencies = { ...(nodesPkg.dependencies ?? {}), [name]: pkgJson.version };
		await fsp.writeFile(nodesPkgPath, JSON.stringify(nodesPkg, null, 2), 'utf8');
		return { name, version: pkgJson.version, installDir, nodesDir, tarball: path.basename(tarball) };
	} finally {
		await fsp.rm(packDir, { recursive: true, force: true });
	}
}

async function httpGet(url, timeoutMs = 3_000) {
	const ctrl = new AbortController();
	const timer = setTimeout(() => ctrl.abort(), timeoutMs);
	try {
		const res = await fetch(url, { signal: ctrl.signal });
		const body = await res.text();
		return { status: res.status, body };
	} catch (error) {
		return { status: 0, body: String(error?.cause?.code ?? error?.message ?? error) };
	} finally {
		clearTimeout(timer);
	}
}

/**
 * Starts n8n under the Node its runtime needs (provisionN8n picks it).
 * @param {object} [options]
 * @param {number} [options.port] HTTP port (default 5678, or a free one if 5678 is taken)
 * @param {string} [options.host] listen address (default 127.0.0.1)
 * @param {string} [options.userFolder] N8N_USER_FOLDER (default: a new temp folder); n8n keeps its data in <userFolder>/.n8n
 * @param {string} [options.communityPackageDir] built community package folder to install into <userFolder>/.n8n/nodes
 * @param {Record<string,string>} [options.env] extra environment (wins over the defaults below)
 * @param {string} [options.logFile] where n8n's stdout+stderr go (default <userFolder>/n8n.log)
 * @param {(line: string) => void} [options.onLog] also receive each log line
 * @param {(message: string) => void} [options.onProgress]
 * @param {number} [options.timeoutMs] how long to wait for readiness (default 180 s)
 * @param {'start' | 'worker'} [options.command] `n8n start` (default) or `n8n worker` (queue mode;
 *   `env` must then hold the queue and database settings). A worker serves only /healthz and
 *   /healthz/readiness, on `port` (QUEUE_HEALTH_CHECK_PORT; default a free port), and does not
 *   install the package: it shares the user folder of the main process that did.
 * @param {string[]} [options.args] more arguments for the command (e.g. ['--concurrency=5'])
 */
export async function startN8n({
	command = 'start',
	args = [],
	port,
	host = '127.0.0.1',
	userFolder,
	communityPackageDir,
	env: extraEnv = {},
	logFile,
	onLog,
	onProgress = defaultProgress,
	timeoutMs = 180_000,
} = {}) {
	const info = await provisionN8n({ onProgress });

	userFolder = userFolder
		? path.resolve(userFolder)
		: await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-dev-user-'));
	await fsp.mkdir(userFolder, { recursive: true });
	logFile = path.resolve(logFile ?? path.join(userFolder, 'n8n.log'));
	await fsp.mkdir(path.dirname(logFile), { recursive: true });

	let installed;
	if (communityPackageDir) {
		installed = await installCommunityPackage({ packageDir: path.resolve(communityPackageDir), userFolder, nodeInfo: info });
		onProgress(`installed ${installed.name}@${installed.version} into ${installed.installDir}`);
	}

	// Ports: n8n's HTTP port and the task runner broker (default 5679) must both be free.
	// A port that looked free can be grabbed by a concurrent start before n8n binds it, so
	// auto-picked ports are re-picked and n8n relaunched (up to 3 times) when that happens.
	const fixedPort = port !== undefined ? Number(port) : undefined;
	const fixedBroker = extraEnv.N8N_RUNNERS_BROKER_PORT ? Number(extraEnv.N8N_RUNNERS_BROKER_PORT) : undefined;
	if (fixedPort !== undefined && !(await isPortFree(fixedPort))) throw new Error(`Port ${fixedPort} is already in use`);
	// a worker takes any free ports: 5678/5679 are the main process's
	const preferDefaults = command === 'start';
	for (let attempt = 1; ; attempt++) {
		const taken = new Set();
		// after a clash, another n8n is probably starting: leave 5678/5679 to it
		const httpPort = fixedPort ?? (await pickPort(attempt === 1 && preferDefaults ? DEFAULT_PORT : undefined, taken));
		taken.add(httpPort);
		const brokerPort = fixedBroker ?? (await pickPort(attempt === 1 && preferDefaults ? DEFAULT_BROKER_PORT : undefined, taken));
		try {
			return await launch({ command, args, info, host, port: httpPort, brokerPort, userFolder, extraEnv, logFile, onLog, onProgress, timeoutMs, installed });
		} catch (error) {
			const retryable = error.portInUse && (fixedPort === undefined || fixedBroker === undefined) && attempt < 3;
			if (!retryable) throw error;
			onProgress(`${error.portInUse} was taken meanwhile; retrying with other ports`);
		}
	}
}

async function launch({ command, args, info, host, port, brokerPort, userFolder, extraEnv, logFile, onLog, onProgress, timeoutMs, installed }) {
	const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
	const isWorker = command === 'worker';
	const env = {
		...envWithNode(info.nodeBinDir),
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: host,
		N8N_HOST: host,
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: url,
		N8N_WEBHOOK_URL: `${url}/`,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		DB_TYPE: 'sqlite',
		N8N_SECURE_COOKIE: 'false',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		...info.serverEnv,
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
		N8N_LOG_OUTPUT: 'console',
		N8N_LOG_LEVEL: 'info',
		N8N_NO_COLOR: 'true',
		NO_COLOR: '1',
		...(isWorker
			? {
					// the worker's own HTTP server: health and readiness only, loopback only
					QUEUE_HEALTH_CHECK_ACTIVE: 'true',
					QUEUE_HEALTH_CHECK_PORT: String(port),
					N8N_WORKER_SERVER_ADDRESS: host,
				}
			: {}),
		...Object.fromEntries(Object.entries(extraEnv).map(([k, v]) => [k, String(v)])),
	};

	// n8n writes straight into the log file (not through a pipe to this process), so it keeps
	// working if this process dies; this process follows the file for `tail` and `onLog`.
	const what = isWorker ? `n8n@${info.n8nVersion} worker (health ${url})` : `n8n@${info.n8nVersion} on ${url}`;
	fs.appendFileSync(logFile, `\n===== ${new Date().toISOString()} starting ${what} (broker ${brokerPort}), N8N_USER_FOLDER=${userFolder}\n`);
	onProgress(`starting ${what} (task broker port ${brokerPort}); log: ${logFile}`);
	const logFd = fs.openSync(logFile, 'a');
	let readPos = fs.fstatSync(logFd).size;
	let child;
	try {
		child = spawn(info.node, [info.n8nBin, command, ...args], {
			cwd: userFolder,
			env,
			detached: true, // own process group, so stop() also ends the task runner children
			stdio: ['ignore', logFd, logFd],
		});
	} finally {
		fs.closeSync(logFd);
	}
	const tail = [];
	let partial = '';
	const follow = () => {
		let fd;
		try {
			fd = fs.openSync(logFile, 'r');
			const size = fs.fstatSync(fd).size;
			if (size <= readPos) return;
			const buf = Buffer.alloc(size - readPos);
			fs.readSync(fd, buf, 0, buf.length, readPos);
			readPos = size;
			const lines = (partial + buf.toString('utf8')).split('\n');
			partial = lines.pop();
			for (const line of lines) {
				tail.push(line);
				if (tail.length > 80) tail.shift();
				onLog?.(line);
			}
		} catch {
			// log file rotated or removed: nothing to follow
		} finally {
			if (fd !== undefined) fs.closeSync(fd);
		}
	};
	const follower = setInterval(follow, 200);
	follower.unref();

	let exited = null;
	const exitPromise = new Promise((resolve) => {
		child.on('exit', (code, signal) => {
			exited = { code, signal };
			clearInterval(follower);
			follow();
			resolve(exited);
		});
	});

	const killGroup = (signal) => {
		try {
			process.kill(-child.pid, signal);
		} catch {}
	};
	const onParentExit = () => killGroup('SIGTERM');
	process.on('exit', onParentExit);
	trackChild(killGroup);

	let stopping = null;
	const stop = async ({ timeoutMs: stopTimeout = 30_000 } = {}) => {
		if (!stopping) {
			stopping = (async () => {
				process.off('exit', onParentExit);
				untrackChild(killGroup);
				if (!exited) {
					killGroup('SIGTERM');
					const timer = setTimeout(() => killGroup('SIGKILL'), stopTimeout);
					await exitPromise;
					clearTimeout(timer);
				}
				// n8n may leave its task runner behind briefly; make sure the group is gone.
				killGroup('SIGKILL');
				return exited;
			})();
		}
		return await stopping;
	};

	/**
	 * Runs an n8n CLI command (e.g. ['import:workflow', '--input=wf.json']) against the same user
	 * folder (same database and encryption key). Commands such as `execute` start their own task
	 * broker, so each call gets its own free N8N_RUNNERS_BROKER_PORT.
	 */
	const runCli = async (args, { input, env: cliEnv = {} } = {}) => {
		const cliBrokerPort = cliEnv.N8N_RUNNERS_BROKER_PORT ?? String(await getFreePort());
		return await new Promise((resolve, reject) => {
			const p = spawn(info.node, [info.n8nBin, ...args], {
				cwd: userFolder,
				env: { ...env, N8N_RUNNERS_BROKER_PORT: cliBrokerPort, ...cliEnv },
				stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
			});
			let stdout = '';
			let stderr = '';
			p.stdout.on('data', (d) => (stdout += d));
			p.stderr.on('data', (d) => (stderr += d));
			p.on('error', reject);
			p.on('close', (code) => resolve({ code, stdout, stderr }));
			if (input !== undefined) p.stdin.end(input);
		});
	};

	// Wait for: /healthz (HTTP up) -> /healthz/readiness (DB connected + migrated) -> /rest/settings (REST API + editor config)
	const deadline = Date.now() + timeoutMs;
	const started = Date.now();
	// (a worker: /healthz -> /healthz/readiness = DB and Redis connected, taking jobs)
	const steps = isWorker ? ['/healthz', '/healthz/readiness'] : ['/healthz', '/healthz/readiness', '/rest/settings'];
	let step = 0;
	let last = '';
	while (step < steps.length) {
		follow();
		if (exited) {
			const inUse = tail.join('\n').match(/(n8n's port|n8n Task Broker's port|Port) (\d+) is already in use/);
			const error = new Error(
				`n8n exited during startup (${exited.signal ?? `code ${exited.code}`}); log: ${logFile}\n--- last lines ---\n${tail.join('\n')}`,
			);
			if (inUse) error.portInUse = `port ${inUse[2]}`;
			throw error;
		}
		if (Date.now() > deadline) {
			await stop();
			throw new Error(`n8n not ready after ${timeoutMs} ms (waiting for ${steps[step]}: ${last}); log: ${logFile}\n--- last lines ---\n${tail.join('\n')}`);
		}
		const res = await httpGet(url + steps[step]);
		last = `${res.status} ${res.body.slice(0, 200)}`;
		if (res.status === 200) {
			step++;
			continue;
		}
		await new Promise((r) => setTimeout(r, 500));
	}
	onProgress(`${isWorker ? `n8n worker (health ${url})` : `n8n`} ready${isWorker ? '' : ` at ${url}`} after ${((Date.now() - started) / 1000).toFixed(1)}s`);

	return {
		command,
		url,
		port,
		brokerPort,
		userFolder,
		n8nFolder: path.join(userFolder, '.n8n'),
		logFile,
		pid: child.pid,
		process: child,
		env,
		node: info.node,
		n8nBin: info.n8nBin,
		n8nVersion: info.n8nVersion,
		communityPackage: installed,
		runCli,
		stop,
	};
}

/**
 * Creates the instance owner (a fresh n8n has none) and returns the session cookie.
 * `POST /rest/owner/setup` only works once per user folder; afterwards use `login`.
 */
export async function setupOwner(url, { email = 'dev@example.com', password = 'Devpassw0rd!', firstName = 'Dev', lastName = 'User' } = {}) {
	const res = await fetch(`${url}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ email, password, firstName, lastName }),
	});
	if (!res.ok) throw new Error(`owner setup failed: ${res.status} ${await res.text()}`);
	return { cookie: cookieFrom(res), email, password };
}

/** Logs in with email + password and returns the session cookie. */
export async function login(url, { email = 'dev@example.com', password = 'Devpassw0rd!' } = {}) {
	const res = await fetch(`${url}/rest/login`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ emailOrLdapLoginId: email, password }),
	});
	if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
	return { cookie: cookieFrom(res) };
}

function cookieFrom(res) {
	const cookies = typeof res.headers.getSetCookie === 'function' ? res.headers.getSetCookie() : [res.headers.get('set-cookie')];
	return cookies
		.filter(Boolean)
		.map((c) => c.split(';')[0])
		.join('; ');
}

// CLI
const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
	const argv = process.argv.slice(2);
	const opt = (name) => {
		const i = argv.indexOf(name);
		return i >= 0 ? argv[i + 1] : undefined;
	};
	if (argv.includes('--help') || argv.includes('-h')) {
		console.log('Usage: node dev/start-n8n.mjs [--port N] [--user-folder DIR] [--package DIR] [--log FILE]');
		process.exit(0);
	}
	try {
		const n8n = await startN8n({
			port: opt('--port'),
			userFolder: opt('--user-folder'),
			communityPackageDir: opt('--package'),
			logFile: opt('--log'),
		});
		console.log(`n8n is running at ${n8n.url}`);
		console.log(`N8N_USER_FOLDER=${n8n.userFolder}`);
		console.log(`log: ${n8n.logFile}`);
		console.log('Press Ctrl-C to stop.');
		let stopping = false;
		const shutdown = async () => {
			if (stopping) return;
			stopping = true;
			console.log('\nstopping n8n...');
			await n8n.stop();
			process.exit(0);
		};
		process.on('SIGINT', shutdown);
		process.on('SIGTERM', shutdown);
		n8n.process.on('exit', (code, signal) => {
			if (stopping) return;
			console.error(`n8n exited unexpectedly (${signal ?? `code ${code}`}); see ${n8n.logFile}`);
			process.exit(code || 1);
		});
	} catch (error) {
		console.error(`[start-n8n] FAILED: ${error.message}`);
		process.exit(1);
	}
}
