// Starts a real n8n server (2.x, or 1.x with N8N_DEV_RUNTIME=v1; from the cache dev/provision.mjs
// fills) with a community package installed the way n8n installs one: n8n 2.41.1's
// CommunityPackagesService packs the package (`npm pack`), unpacks it into
// <N8N_USER_FOLDER>/.n8n/nodes/node_modules/<name>, strips its dev/peer/optional dependencies, runs
// `npm install` there with the flags below and records it in nodes/package.json; at startup n8n
// loads every `n8n-nodes-*` there, its types named `<package name>.<node name>` (a package declaring
// an `n8nNodesApiVersion` above n8n's own, 1, is skipped). Here the pack is of the local folder
// instead of a registry download; the rest is identical. (N8N_CUSTOM_EXTENSIONS would name the
// types `CUSTOM.<node>`, not what users of the published package get.)
//
//   const n8n = await startN8n({ communityPackageDir: process.cwd() }); ...; await n8n.stop();

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { provisionN8n, npmCommand, envWithNode, trackChild, untrackChild } from './provision.mjs';

const DEFAULT_PORT = 5678;
const DEFAULT_BROKER_PORT = 5679;

function canListen(port, host) {
	return new Promise((resolve) => {
		const server = net.createServer().unref();
		server.once('error', () => resolve(false));
		server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
	});
}

export function getFreePort() {
	return new Promise((resolve, reject) => {
		const server = net.createServer().unref();
		server.once('error', reject);
		server.listen({ port: 0, host: '127.0.0.1' }, () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

/** `preferred` when nothing listens there (loopback nor wildcard), else a free port not in `taken`. */
async function pickPort(preferred, taken) {
	if (
		preferred !== undefined &&
		!taken.has(preferred) &&
		(await canListen(preferred, '127.0.0.1')) &&
		(await canListen(preferred))
	)
		return preferred;
	for (;;) {
		const port = await getFreePort();
		if (!taken.has(port)) return port;
	}
}

/** A child in a process group of its own, ended with it by stop() and when this process exits. */
export function spawnGroup(
	cmd,
	args,
	{ logFile, stopSignal = 'SIGTERM', last = false, ...options },
) {
	const logFd = fs.openSync(logFile, 'a');
	let child;
	try {
		// a group of its own, so stop() reaches n8n's task runners too
		child = spawn(cmd, args, { ...options, detached: true, stdio: ['ignore', logFd, logFd] });
	} finally {
		fs.closeSync(logFd);
	}
	let exited = null;
	const exitPromise = new Promise((resolve) => {
		child.on('exit', (code, signal) => resolve((exited = { code, signal })));
		child.on('error', (error) => resolve((exited = { code: null, signal: null, error })));
	});
	const killGroup = (signal) => {
		try {
			process.kill(-child.pid, signal);
		} catch {}
	};
	const onExit = () => killGroup(stopSignal);
	trackChild(onExit, { last });
	let stopping;
	const stop = ({ timeoutMs = 30_000 } = {}) =>
		(stopping ??= (async () => {
			untrackChild(onExit);
			if (!exited) {
				killGroup(stopSignal);
				const timer = setTimeout(() => killGroup('SIGKILL'), timeoutMs);
				await exitPromise;
				clearTimeout(timer);
			}
			killGroup('SIGKILL'); // what the group left behind, e.g. n8n's task runner
			return exited;
		})());
	return { child, pid: child.pid, exited: () => exited, exitPromise, stop };
}

const runQuiet = (cmd, args, options) =>
	execFileSync(cmd, args, {
		...options,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'pipe'],
		maxBuffer: 64 * 1024 * 1024,
	});

/**
 * Installs a built package folder into <userFolder>/.n8n/nodes as n8n's
 * CommunityPackagesService.downloadPackage does for a registry package.
 * @returns {{ name: string, version: string, installDir: string, nodesDir: string }}
 */
export async function installCommunityPackage({ packageDir, userFolder, nodeInfo }) {
	const { name, n8n } = JSON.parse(
		await fsp.readFile(path.join(packageDir, 'package.json'), 'utf8'),
	);
	if (!/^(@[^/]+\/)?n8n-nodes-/.test(name))
		throw new Error(`n8n only loads community packages named n8n-nodes-* (got "${name}")`);
	for (const file of [...(n8n?.nodes ?? []), ...(n8n?.credentials ?? [])]) {
		if (!fs.existsSync(path.join(packageDir, file)))
			throw new Error(`${name}: ${file} does not exist (build the package first)`);
	}
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const installDir = path.join(nodesDir, 'node_modules', ...name.split('/'));
	const env = envWithNode(nodeInfo.nodeBinDir, { npm_config_update_notifier: 'false' });
	const npm = npmCommand(nodeInfo.node);
	const packDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-dev-pack-'));
	try {
		const packed = runQuiet(
			npm.cmd,
			[
				...npm.prefixArgs,
				'pack',
				packageDir,
				'--pack-destination',
				packDir,
				'--json',
				'--ignore-scripts',
			],
			{ cwd: packDir, env },
		);
		await fsp.rm(installDir, { recursive: true, force: true });
		await fsp.mkdir(installDir, { recursive: true });
		runQuiet('tar', [
			'-xzf',
			path.join(packDir, JSON.parse(packed)[0].filename),
			'-C',
			installDir,
			'--strip-components=1',
		]);
		const pkgJsonPath = path.join(installDir, 'package.json');
		const { devDependencies, peerDependencies, optionalDependencies, ...pkgJson } = JSON.parse(
			await fsp.readFile(pkgJsonPath, 'utf8'),
		);
		await fsp.writeFile(pkgJsonPath, JSON.stringify(pkgJson, null, 2));
		const flags = [
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
		];
		runQuiet(npm.cmd, [...npm.prefixArgs, 'install', ...flags], { cwd: installDir, env });
		// nodes/package.json as n8n keeps it
		const nodesPkgPath = path.join(nodesDir, 'package.json');
		const nodesPkg = JSON.parse(
			await fsp
				.readFile(nodesPkgPath, 'utf8')
				.catch(() => '{"name":"installed-nodes","private":true}'),
		);
		nodesPkg.dependencies = { ...nodesPkg.dependencies, [name]: pkgJson.version };
		await fsp.writeFile(nodesPkgPath, JSON.stringify(nodesPkg, null, 2));
		return { name, version: pkgJson.version, installDir, nodesDir };
	} finally {
		await fsp.rm(packDir, { recursive: true, force: true });
	}
}

async function httpStatus(url) {
	try {
		const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
		return `${res.status} ${(await res.text()).slice(0, 200)}`;
	} catch (error) {
		return `0 ${error?.cause?.code ?? error?.message}`;
	}
}

/**
 * Starts n8n under the Node its runtime needs (provisionN8n picks it).
 * @param {object} [options]
 * @param {'start' | 'worker'} [options.command] `n8n start` (default) or `n8n worker` (queue mode;
 *   `env` holds the queue and database settings). A worker serves only /healthz and
 *   /healthz/readiness, on `port`, and installs nothing: it shares the main process's user folder.
 * @param {string[]} [options.args] more arguments for the command (e.g. ['--concurrency=5'])
 * @param {number} [options.port] HTTP port (default 5678, or a free one if 5678 is taken)
 * @param {string} [options.userFolder] N8N_USER_FOLDER (default: a new temp folder)
 * @param {string} [options.communityPackageDir] built package to install into <userFolder>/.n8n/nodes
 * @param {Record<string,string>} [options.env] more environment (wins over the defaults below)
 * @param {string} [options.logFile] n8n's output (default <userFolder>/n8n.log)
 * @param {(line: string) => void} [options.onLog] each log line
 * @param {(message: string) => void} [options.onProgress]
 */
export async function startN8n({
	command = 'start',
	args = [],
	port,
	userFolder,
	communityPackageDir,
	env: extraEnv = {},
	logFile,
	onLog,
	onProgress = (m) => console.error(`[start-n8n] ${m}`),
	timeoutMs = 180_000,
} = {}) {
	const info = await provisionN8n({ onProgress });
	userFolder = userFolder
		? path.resolve(userFolder)
		: await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-dev-user-'));
	await fsp.mkdir(userFolder, { recursive: true });
	logFile = path.resolve(logFile ?? path.join(userFolder, 'n8n.log'));
	let installed;
	if (communityPackageDir) {
		installed = await installCommunityPackage({
			packageDir: path.resolve(communityPackageDir),
			userFolder,
			nodeInfo: info,
		});
		onProgress(`installed ${installed.name}@${installed.version} into ${installed.installDir}`);
	}
	// n8n's HTTP port and its task broker's must both be free. A port that looked free can be
	// taken by a concurrent start before n8n binds it: auto-picked ports are picked again and n8n
	// relaunched (up to 3 times). A worker takes any free ports: 5678/5679 are the main process's.
	const fixedPort = port !== undefined ? Number(port) : undefined;
	const fixedBroker = extraEnv.N8N_RUNNERS_BROKER_PORT
		? Number(extraEnv.N8N_RUNNERS_BROKER_PORT)
		: undefined;
	if (fixedPort !== undefined && !(await canListen(fixedPort, '127.0.0.1')))
		throw new Error(`Port ${fixedPort} is already in use`);
	for (let attempt = 1; ; attempt++) {
		const preferDefaults = command === 'start' && attempt === 1;
		const taken = new Set();
		const httpPort =
			fixedPort ?? (await pickPort(preferDefaults ? DEFAULT_PORT : undefined, taken));
		taken.add(httpPort);
		const brokerPort =
			fixedBroker ?? (await pickPort(preferDefaults ? DEFAULT_BROKER_PORT : undefined, taken));
		try {
			return await launch({
				command,
				args,
				info,
				port: httpPort,
				brokerPort,
				userFolder,
				extraEnv,
				logFile,
				onLog,
				onProgress,
				timeoutMs,
				installed,
			});
		} catch (error) {
			if (
				!error.portInUse ||
				(fixedPort !== undefined && fixedBroker !== undefined) ||
				attempt >= 3
			)
				throw error;
			onProgress(`${error.portInUse} was taken meanwhile; retrying with other ports`);
		}
	}
}

async function launch({
	command,
	args,
	info,
	port,
	brokerPort,
	userFolder,
	extraEnv,
	logFile,
	onLog,
	onProgress,
	timeoutMs,
	installed,
}) {
	const host = '127.0.0.1';
	const url = `http://${host}:${port}`;
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
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: host,
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
		// a worker's own HTTP server: health and readiness only, loopback only
		...(isWorker
			? {
					QUEUE_HEALTH_CHECK_ACTIVE: 'true',
					QUEUE_HEALTH_CHECK_PORT: String(port),
					N8N_WORKER_SERVER_ADDRESS: host,
				}
			: {}),
		...Object.fromEntries(Object.entries(extraEnv).map(([k, v]) => [k, String(v)])),
	};

	// n8n writes straight into the log file (it keeps working if this process dies); this
	// process follows the file for onLog and for the lines an error shows.
	const what = isWorker
		? `n8n@${info.n8nVersion} worker (health ${url})`
		: `n8n@${info.n8nVersion} on ${url}`;
	fs.appendFileSync(
		logFile,
		`\n===== ${new Date().toISOString()} starting ${what} (broker ${brokerPort}), N8N_USER_FOLDER=${userFolder}\n`,
	);
	onProgress(`starting ${what} (task broker port ${brokerPort}); log: ${logFile}`);
	let readPos = fs.statSync(logFile).size;
	const service = spawnGroup(info.node, [info.n8nBin, command, ...args], {
		cwd: userFolder,
		env,
		logFile,
	});
	const tail = [];
	let partial = '';
	const follow = () => {
		let fd;
		try {
			fd = fs.openSync(logFile, 'r');
			const buf = Buffer.alloc(Math.max(0, fs.fstatSync(fd).size - readPos));
			readPos += fs.readSync(fd, buf, 0, buf.length, readPos);
			const lines = (partial + buf.toString('utf8')).split('\n');
			partial = lines.pop();
			for (const line of lines) {
				tail.push(line);
				if (tail.length > 80) tail.shift();
				onLog?.(line);
			}
		} catch {
			// log file removed: nothing to follow
		} finally {
			if (fd !== undefined) fs.closeSync(fd);
		}
	};
	const follower = setInterval(follow, 200).unref();
	service.exitPromise.then(() => (clearInterval(follower), follow()));
	const lastLines = () => `; log: ${logFile}\n--- last lines ---\n${tail.join('\n')}`;

	/**
	 * Runs an n8n CLI command (e.g. ['import:workflow', '--input=wf.json']) on the same user folder
	 * (database, encryption key), each with its own task broker port (`execute` starts one).
	 */
	const runCli = async (cliArgs, { env: cliEnv = {} } = {}) => {
		const cliBrokerPort = cliEnv.N8N_RUNNERS_BROKER_PORT ?? String(await getFreePort());
		return await new Promise((resolve, reject) => {
			const p = spawn(info.node, [info.n8nBin, ...cliArgs], {
				cwd: userFolder,
				env: { ...env, N8N_RUNNERS_BROKER_PORT: cliBrokerPort, ...cliEnv },
			});
			let stdout = '';
			let stderr = '';
			p.stdout.on('data', (d) => (stdout += d));
			p.stderr.on('data', (d) => (stderr += d));
			p.on('error', reject);
			p.on('close', (code, signal) => resolve({ code: code ?? signal, stdout, stderr })); // 'SIGKILL' says more than null
		});
	};

	// ready: /healthz (HTTP up), /healthz/readiness (database connected and migrated; a worker:
	// and Redis), /rest/settings (REST API and editor config)
	const deadline = Date.now() + timeoutMs;
	const started = Date.now();
	const steps = isWorker
		? ['/healthz', '/healthz/readiness']
		: ['/healthz', '/healthz/readiness', '/rest/settings'];
	for (let step = 0, last = ''; step < steps.length; ) {
		follow();
		const exited = service.exited();
		if (exited) {
			const error = new Error(
				`n8n exited during startup (${exited.signal ?? `code ${exited.code}`})${lastLines()}`,
			);
			const inUse = tail
				.join('\n')
				.match(/(n8n's port|n8n Task Broker's port|Port) (\d+) is already in use/);
			if (inUse) error.portInUse = `port ${inUse[2]}`;
			throw error;
		}
		if (Date.now() > deadline) {
			await service.stop();
			throw new Error(
				`n8n not ready after ${timeoutMs} ms (waiting for ${steps[step]}: ${last})${lastLines()}`,
			);
		}
		last = await httpStatus(url + steps[step]);
		if (last.startsWith('200 ')) step++;
		else await new Promise((r) => setTimeout(r, 250));
	}
	onProgress(
		`${isWorker ? `n8n worker (health ${url})` : `n8n at ${url}`} ready after ${((Date.now() - started) / 1000).toFixed(1)}s`,
	);
	return {
		url,
		port,
		userFolder,
		logFile,
		pid: service.pid,
		process: service.child,
		n8nVersion: info.n8nVersion,
		n8nDir: info.n8nDir,
		communityPackage: installed,
		runCli,
		stop: service.stop,
	};
}

/**
 * Creates the instance owner (a fresh n8n has none) and returns the session cookie.
 * `POST /rest/owner/setup` only works once per user folder; afterwards use `login`.
 */
export async function setupOwner(
	url,
	{
		email = 'dev@example.com',
		password = 'Devpassw0rd!',
		firstName = 'Dev',
		lastName = 'User',
	} = {},
) {
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
	const cookies =
		typeof res.headers.getSetCookie === 'function'
			? res.headers.getSetCookie()
			: [res.headers.get('set-cookie')];
	return cookies
		.filter(Boolean)
		.map((c) => c.split(';')[0])
		.join('; ');
}
