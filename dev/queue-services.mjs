// Redis and Postgres for n8n's queue mode (`npm run dev:queue`, `npm run test:queue`, the bench's
// queue-mode figure): Debian's `redis-server` and `postgresql` packages, but never their system
// services. Each start runs its own redis-server and its own Postgres cluster (initdb into a
// folder of ours), listening on a free loopback port only, and stops them again.
//
//   ensureQueuePackages()   apt-get installs redis-server and postgresql when missing
//   startRedis({ dir })     -> { host, port, logFile, stop() }
//   startPostgres({ dataDir }) -> { host, port, user, password, database, env, logFile, stop() }
//
// Postgres refuses to run as root: run as root, the cluster belongs to the `postgres` user that
// Debian's package creates, and its folder must be reachable by that user (a folder under /tmp,
// or a repository outside /root, is; the callers make their temp folders traversable).
// Plain Node ESM, no dependencies.

import { execFile, execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

import { getFreePort, spawnGroup } from './start-n8n.mjs';

export const APT_PACKAGES = ['redis-server', 'postgresql'];
const REDIS_SERVER = process.env.QUEUE_REDIS_SERVER || '/usr/bin/redis-server';
const POSTGRES_ROOT = '/usr/lib/postgresql';

const defaultProgress = (message) => process.stderr.write(`[queue] ${message}\n`);
const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const execFileP = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The newest Postgres server of Debian's packages: { version, binDir } or undefined. */
export function findPostgres() {
	if (process.env.QUEUE_PG_BINDIR) return { version: '?', binDir: process.env.QUEUE_PG_BINDIR };
	let versions;
	try {
		versions = fs.readdirSync(POSTGRES_ROOT).filter((v) => /^\d+$/.test(v));
	} catch {
		return undefined;
	}
	for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
		const binDir = path.join(POSTGRES_ROOT, version, 'bin');
		if (['initdb', 'postgres', 'pg_isready'].every((b) => fs.existsSync(path.join(binDir, b))))
			return { version, binDir };
	}
	return undefined;
}

/**
 * Installs Debian packages with apt-get (as root, or through passwordless sudo) unless `installed()`
 * says they are there; their system services are not used. Shared by test/e2e/prepare.mjs (chromium).
 */
export async function aptInstall(packages, installed, { onProgress = defaultProgress } = {}) {
	if (installed()) return;
	const t0 = Date.now();
	const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
	onProgress(
		`installing Debian's ${packages.join(' ')} with apt-get${sudo.length ? ' (through sudo -n)' : ''}...`,
	);
	const apt = (...args) =>
		execFileP(
			sudo[0] ?? 'apt-get',
			[...sudo.slice(1), ...(sudo.length ? ['apt-get'] : []), ...args],
			{
				env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
				maxBuffer: 64 * 1024 * 1024,
			},
		).catch((error) => {
			throw new Error(
				`could not install ${packages.join(' ')} (apt-get ${args[0]}: ${String(
					error.stderr || error.message,
				)
					.trim()
					.split('\n')
					.pop()}); install them yourself: sudo apt-get install ${packages.join(' ')}`,
			);
		});
	await apt('update', '-qq');
	await apt('install', '-y', '-qq', ...packages);
	if (!installed()) throw new Error(`apt-get ran, but ${packages.join(' ')} is still missing`);
	onProgress(`installed ${packages.join(' and ')} in ${seconds(t0)}`);
}

/** Debian's redis-server and postgresql, installed when missing. */
export const ensureQueuePackages = (options) =>
	aptInstall(APT_PACKAGES, () => fs.existsSync(REDIS_SERVER) && Boolean(findPostgres()), options);

function tailOf(file, lines = 20) {
	try {
		return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
	} catch {
		return '';
	}
}

/** Sends PING to a Redis server; true on +PONG. */
function redisPing(port, host) {
	return new Promise((resolve) => {
		const socket = net.connect({ port, host });
		const timer = setTimeout(() => finish(false), 1_000);
		let data = '';
		function finish(ok) {
			clearTimeout(timer);
			socket.destroy();
			resolve(ok);
		}
		socket.on('connect', () => socket.write('PING\r\n'));
		socket.on('data', (chunk) => {
			data += chunk;
			if (data.includes('\r\n')) finish(data.startsWith('+PONG'));
		});
		socket.on('error', () => finish(false));
	});
}

/**
 * Starts a redis-server of our own: loopback only, a free port, no persistence (it holds only
 * the queue's jobs, which n8n also keeps in Postgres), working folder and log in `dir`.
 */
export async function startRedis({
	dir,
	port,
	host = '127.0.0.1',
	onProgress = defaultProgress,
	timeoutMs = 30_000,
}) {
	await fsp.mkdir(dir, { recursive: true });
	const t0 = Date.now();
	port ??= await getFreePort();
	const logFile = path.join(dir, 'redis.log');
	// no persistence: it holds only the queue's jobs, which n8n also keeps in Postgres
	const service = spawnGroup(
		REDIS_SERVER,
		[
			'--port',
			String(port),
			'--bind',
			host,
			'--protected-mode',
			'yes',
			'--save',
			'',
			'--appendonly',
			'no',
			'--daemonize',
			'no',
			'--dir',
			dir,
			'--databases',
			'1',
		],
		{ logFile, cwd: dir, last: true },
	);
	const deadline = Date.now() + timeoutMs;
	while (!(await redisPing(port, host))) {
		if (service.exited() || Date.now() > deadline) {
			await service.stop();
			throw new Error(
				`redis-server did not start on ${host}:${port}; log ${logFile}:\n${tailOf(logFile)}`,
			);
		}
		await sleep(100);
	}
	onProgress(`Redis ${host}:${port} ready in ${seconds(t0)} (log: ${logFile})`);
	return { host, port, logFile, pid: service.pid, stop: service.stop };
}

/** uid and gid of the `postgres` user when this process is root (Postgres refuses root). */
function postgresOwner() {
	if (process.getuid?.() !== 0) return undefined;
	try {
		const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
		const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
		return { uid, gid };
	} catch {
		throw new Error(
			"running as root, but there is no `postgres` user to run Postgres as (Debian's postgresql package creates it)",
		);
	}
}

function runAs(owner, cmd, args, { env } = {}) {
	const res = spawnSync(cmd, args, {
		encoding: 'utf8',
		env: { ...process.env, ...env },
		...(owner ? { uid: owner.uid, gid: owner.gid, cwd: '/' } : {}),
	});
	if (res.error) throw res.error;
	return res;
}

/**
 * Starts a Postgres cluster of our own in `dataDir` (initdb on first use; a cluster already there
 * is reused with its password, kept in `<dataDir>.password`), listening on a free loopback port
 * only (no Unix socket), and creates the database `database` when missing.
 * @returns {Promise<{ host, port, user, password, database, env: Record<string,string>, logFile, stop }>}
 */
export async function startPostgres({
	dataDir,
	port,
	host = '127.0.0.1',
	user = 'n8n',
	database = 'n8n',
	onProgress = defaultProgress,
	timeoutMs = 60_000,
}) {
	const pg = findPostgres();
	if (!pg) throw new Error('Postgres is not installed (apt-get install postgresql)');
	const bin = (name) => path.join(pg.binDir, name);
	const owner = postgresOwner();
	const t0 = Date.now();
	dataDir = path.resolve(dataDir);
	const passwordFile = `${dataDir}.password`;
	const logFile = `${dataDir}.log`;
	await fsp.mkdir(path.dirname(dataDir), { recursive: true });

	if (owner) {
		// the cluster's folder itself is made the postgres user's below; it must be able to reach it
		const reach = runAs(owner, 'test', ['-x', path.dirname(dataDir)]);
		if (reach.status !== 0)
			throw new Error(
				`the postgres user cannot reach ${path.dirname(dataDir)} (Postgres refuses to run as root, so it runs as \`postgres\`): ` +
					'choose a data folder outside /root, e.g. under /tmp',
			);
	}

	let password;
	if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
		password = fs.readFileSync(passwordFile, 'utf8').trim();
	} else {
		password = crypto.randomBytes(18).toString('base64url');
		await fsp.rm(dataDir, { recursive: true, force: true });
		await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });
		if (owner) await fsp.chown(dataDir, owner.uid, owner.gid);
		const pwFile = path.join(path.dirname(dataDir), `.initdb-pw-${process.pid}`);
		await fsp.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
		if (owner) await fsp.chown(pwFile, owner.uid, owner.gid);
		try {
			onProgress(
				`initdb: a new Postgres ${pg.version} cluster in ${dataDir}${owner ? ' (owned by the postgres user)' : ''}`,
			);
			const res = runAs(owner, bin('initdb'), [
				'-D',
				dataDir,
				'-U',
				user,
				`--pwfile=${pwFile}`,
				'--auth=scram-sha-256',
				'-E',
				'UTF8',
				'--locale=C',
				'--no-instructions',
			]);
			if (res.status !== 0)
				throw new Error(`initdb failed (exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
		} finally {
			await fsp.rm(pwFile, { force: true });
		}
		await fsp.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
	}
	if (owner) {
		// the log file is opened by us (root) and handed to postgres; nothing else to chown
		await fsp.chown(dataDir, owner.uid, owner.gid).catch(() => {});
	}

	port ??= await getFreePort();
	fs.appendFileSync(
		logFile,
		`\n===== ${new Date().toISOString()} starting Postgres on ${host}:${port}\n`,
	);
	const service = spawnGroup(
		bin('postgres'),
		[
			'-D',
			dataDir,
			'-p',
			String(port),
			'-c',
			`listen_addresses=${host}`,
			'-c',
			'unix_socket_directories=',
			'-c',
			'max_connections=100',
		],
		{
			logFile,
			cwd: '/',
			...(owner ?? {}),
			stopSignal: 'SIGINT', // "fast shutdown": roll back open transactions, stop
			last: true,
			env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' },
		},
	);
	// How pg_isready, psql and createdb reach this server, as this user
	const connect = ['-h', host, '-p', String(port), '-U', user];
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const res = runAs(owner, bin('pg_isready'), [...connect, '-d', 'postgres', '-q']);
		if (res.status === 0) break;
		if (service.exited() || Date.now() > deadline) {
			await service.stop();
			throw new Error(
				`Postgres did not start on ${host}:${port}; log ${logFile}:\n${tailOf(logFile)}`,
			);
		}
		await sleep(200);
	}
	const env = { PGPASSWORD: password };
	const exists = runAs(
		owner,
		bin('psql'),
		[
			...connect,
			'-d',
			'postgres',
			'-tAc',
			`SELECT 1 FROM pg_database WHERE datname = '${database}'`,
		],
		{ env },
	);
	if (exists.status !== 0) {
		await service.stop();
		throw new Error(`psql failed: ${exists.stderr}`);
	}
	if (exists.stdout.trim() !== '1') {
		const created = runAs(owner, bin('createdb'), [...connect, database], { env });
		if (created.status !== 0) {
			await service.stop();
			throw new Error(`createdb ${database} failed: ${created.stderr}`);
		}
	}
	onProgress(
		`Postgres ${pg.version} ${host}:${port} ready in ${seconds(t0)} (database "${database}", log: ${logFile})`,
	);
	return {
		host,
		port,
		user,
		password,
		database,
		dataDir,
		logFile,
		pid: service.pid,
		/** n8n's DB_* settings for this database. */
		n8nEnv: {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: host,
			DB_POSTGRESDB_PORT: String(port),
			DB_POSTGRESDB_DATABASE: database,
			DB_POSTGRESDB_USER: user,
			DB_POSTGRESDB_PASSWORD: password,
			DB_POSTGRESDB_SCHEMA: 'public',
		},
		stop: service.stop,
	};
}
