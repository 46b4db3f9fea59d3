// `npm run dev:queue` as a user runs it: it starts Redis, Postgres, the n8n main process and two
// workers and says so, the form it prints runs on a worker, and Ctrl-C (SIGINT to the terminal's
// foreground process group) stops everything it started, in order, and nothing else.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { submitForm } from '../../dev/n8n-setup.mjs';
import { REPO_DIR } from './helpers.mjs';

let tmp;
let child;
let output = '';

beforeAll(async () => {
	tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-dev-queue-'));
	await fsp.chmod(tmp, 0o711); // Postgres runs as the postgres user when we are root
});

afterAll(async () => {
	if (child && child.exitCode === null) {
		try {
			process.kill(-child.pid, 'SIGINT');
		} catch {}
		await new Promise((r) => setTimeout(r, 15_000));
	}
	await fsp.rm(tmp, { recursive: true, force: true });
}, 60_000);

/** Every descendant of `root` (pid -> parent pid from ps), root included. */
function descendants(root) {
	const table = new Map();
	for (const line of execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
		.trim()
		.split('\n')) {
		const [pid, ppid] = line.trim().split(/\s+/).map(Number);
		table.set(pid, ppid);
	}
	const found = new Set([root]);
	let grew = true;
	while (grew) {
		grew = false;
		for (const [pid, ppid] of table) {
			if (found.has(ppid) && !found.has(pid)) {
				found.add(pid);
				grew = true;
			}
		}
	}
	return [...found];
}

const alive = (pid) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
};

const commandOf = (pid) => {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
	} catch {
		return '';
	}
};

const listening = (port) =>
	new Promise((resolve) => {
		const socket = net.connect({ port, host: '127.0.0.1' });
		socket.once('connect', () => (socket.destroy(), resolve(true)));
		socket.once('error', () => resolve(false));
	});

function waitForOutput(pattern, timeoutMs) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() => reject(new Error(`no ${pattern} in the output after ${timeoutMs} ms:\n${output}`)),
			timeoutMs,
		);
		const check = () => {
			const match = output.match(pattern);
			if (match) {
				clearTimeout(timer);
				child.stdout.off('data', check);
				resolve(match);
			}
		};
		child.stdout.on('data', check);
		child.on('exit', () => {
			clearTimeout(timer);
			reject(
				new Error(`npm run dev:queue exited (${child.exitCode ?? child.signalCode}):\n${output}`),
			);
		});
		check();
	});
}

test('npm run dev:queue starts Redis, Postgres, n8n and two workers; Ctrl-C stops all of it', async () => {
	const userFolder = path.join(tmp, 'n8n');
	child = spawn(
		'npm',
		[
			'run',
			'dev:queue',
			'--',
			'--no-build',
			'--port',
			'0',
			'--sandbox-port',
			'0',
			'--user-folder',
			userFolder,
		],
		{ cwd: REPO_DIR, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
	);
	child.stdout.on('data', (d) => (output += d));
	child.stderr.on('data', (d) => (output += d));
	await waitForOutput(/\[dev\] ready in/, 240_000);

	expect(output).toMatch(/queue mode: .* 2 workers run the executions/);
	const redisPort = Number(output.match(/Redis \(job queue\):\s+127\.0\.0\.1:(\d+)/)[1]);
	const pgPort = Number(output.match(/Postgres:\s+127\.0\.0\.1:(\d+)/)[1]);
	const workerLogs = [...output.matchAll(/n8n worker-\d:\s+pid \d+, health \S+, log (\S+)/g)].map(
		(m) => m[1],
	);
	expect(workerLogs).toHaveLength(2);
	const form = output.match(/sign-up form:\s+(\S+)/)[1];

	// the printed form works, and a worker (not the main process) runs the execution
	const res = await submitForm(form, ['Jane', 'jane@customer.test', 'Acme']);
	expect(res.status).toBe(200);
	await waitForOutput(/\[sandbox\] \S+ POST \/list\/addProfiles 200/, 60_000);
	const workerRan = workerLogs.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
	expect(workerRan).toMatch(/Worker started execution \d+ \(job /);

	const started = descendants(child.pid);
	const commands = started.map(commandOf).join('\n');
	expect(commands).toMatch(/redis-server/);
	expect(commands).toMatch(/postgres -D/);
	expect(commands.match(/n8n worker/g)).toHaveLength(2);
	expect(commands).toMatch(/n8n start/);

	// Ctrl-C in a terminal sends SIGINT to the foreground group (npm and node dev/dev.mjs)
	const exited = new Promise((resolve) => child.on('exit', resolve));
	process.kill(-child.pid, 'SIGINT');
	let timer;
	await Promise.race([
		exited,
		new Promise((_, reject) => {
			timer = setTimeout(
				() => reject(new Error(`npm run dev:queue did not exit:\n${output}`)),
				90_000,
			);
		}),
	]).finally(() => clearTimeout(timer));
	expect(output).toContain('[dev] stopped.');

	await new Promise((r) => setTimeout(r, 500));
	expect(started.filter(alive).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
	expect(await listening(redisPort)).toBe(false);
	expect(await listening(pgPort)).toBe(false);
	// n8n and its workers stopped before Redis and Postgres: no shutdown errors in their logs
	for (const file of [path.join(userFolder, 'n8n.log'), ...workerLogs])
		expect(fs.readFileSync(file, 'utf8')).not.toMatch(
			/Failed to shutdown gracefully|Connection is closed/,
		);
}, 330_000);
