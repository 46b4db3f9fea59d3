// `npm run dev:queue` as a user runs it: it starts Redis, Postgres, the n8n main process and two
// workers and says so, the form it prints runs on a worker, and Ctrl-C (SIGINT to the terminal's
// foreground process group) stops everything it started, in order, and nothing else.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { submitForm } from '../e2e/executions.mjs';
import { spawnDev, startWatchdog } from '../e2e/helpers.mjs';
import { descendants } from '../e2e/processes.mjs';

// stops npm run dev:queue and removes tmp even if jest is interrupted (afterAll does not run then)
const watchdog = startWatchdog();
const tmp = watchdog.tempDir('basicsengage-dev-queue-');
fs.chmodSync(tmp, 0o711); // Postgres runs as the postgres user when we are root
afterAll(() => watchdog.release(), 60_000);

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

test('npm run dev:queue starts Redis, Postgres, n8n and two workers; Ctrl-C stops all of it', async () => {
	const userFolder = path.join(tmp, 'n8n');
	const dev = spawnDev({ script: 'dev:queue', args: ['--no-build'], userFolder });
	watchdog.stopTree(dev.child.pid);
	await dev.waitFor(/\[dev\] ready in/, 240_000);
	const { output } = dev;

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
	await dev.waitFor(/\[sandbox\] \S+ POST \/list\/addProfiles 200/, 60_000);
	const workerRan = workerLogs.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
	expect(workerRan).toMatch(/Worker started execution \d+ \(job /);

	const started = descendants(dev.child.pid);
	const commands = started.map(commandOf).join('\n');
	expect(commands).toMatch(/redis-server/);
	expect(commands).toMatch(/postgres -D/);
	expect(commands.match(/n8n worker/g)).toHaveLength(2);
	expect(commands).toMatch(/n8n start/);

	// Ctrl-C in a terminal sends SIGINT to the foreground group (npm and node dev/dev.mjs)
	const left = await dev.interrupt(90_000);
	expect(left.map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
	expect(await listening(redisPort)).toBe(false);
	expect(await listening(pgPort)).toBe(false);
	// n8n and its workers stopped before Redis and Postgres: no shutdown errors in their logs
	for (const file of [path.join(userFolder, 'n8n.log'), ...workerLogs])
		expect(fs.readFileSync(file, 'utf8')).not.toMatch(
			/Failed to shutdown gracefully|Connection is closed/,
		);
}, 330_000);
