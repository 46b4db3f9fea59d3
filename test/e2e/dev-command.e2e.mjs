// `npm run dev` as a user runs it: it prints what runs where, everything it prints works, and
// Ctrl-C (SIGINT to the terminal's foreground process group) stops all it started.
import { execFileSync, spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { login } from '../../dev/start-n8n.mjs';
import { DEMO_API_KEY, DEV_OWNER } from '../../dev/n8n-setup.mjs';
import { REPO_DIR } from './helpers.mjs';

let tmp;
let child;
let output = '';

beforeAll(async () => {
	tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-dev-e2e-'));
});

afterAll(async () => {
	if (child && child.exitCode === null) {
		try {
			process.kill(-child.pid, 'SIGKILL');
		} catch {}
	}
	await fsp.rm(tmp, { recursive: true, force: true });
});

/** pid -> parent pid of every process, from ps. */
function processTable() {
	const table = new Map();
	for (const line of execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
		.trim()
		.split('\n')) {
		const [pid, ppid] = line.trim().split(/\s+/).map(Number);
		table.set(pid, ppid);
	}
	return table;
}

function descendants(root) {
	const table = processTable();
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

function waitForOutput(pattern, timeoutMs) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(
			() =>
				reject(
					new Error(`no ${pattern} in npm run dev's output after ${timeoutMs} ms:\n${output}`),
				),
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
			reject(new Error(`npm run dev exited (${child.exitCode ?? child.signalCode}):\n${output}`));
		});
		check();
	});
}

test('npm run dev starts the sandbox and n8n, prints how to use them, and Ctrl-C stops everything', async () => {
	// --no-build: the e2e run built the package already. Ports 0: pick free ones.
	child = spawn(
		'npm',
		[
			'run',
			'dev',
			'--',
			'--no-build',
			'--port',
			'0',
			'--sandbox-port',
			'0',
			'--user-folder',
			path.join(tmp, 'n8n'),
		],
		{
			cwd: REPO_DIR,
			detached: true, // its own process group, like a terminal's foreground job
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	child.stdout.on('data', (d) => (output += d));
	child.stderr.on('data', (d) => (output += d));
	await waitForOutput(/\[dev\] ready in/, 240_000);

	const editor = output.match(/editor:\s+(http:\/\/localhost:\d+)/)[1];
	const sandboxUrl = output.match(
		/BasicsEngage sandbox: (http:\/\/localhost:\d+\/api\/v0\/dev)/,
	)[1];
	const form = output.match(/sign-up form:\s+(\S+)/)[1];
	const mcpServer = output.match(/MCP server:\s+(\S+) \(Streamable HTTP\)/)[1];
	expect(output).toContain(`owner login:        ${DEV_OWNER.email} / ${DEV_OWNER.password}`);
	expect(output).toContain(`API key:            ${DEMO_API_KEY}`);
	expect(output).toMatch(/BasicsEngage example: welcome new sign-ups: http/);
	expect(output).toMatch(/BasicsEngage example: nightly contact sync: http/);
	expect(output).toMatch(/BasicsEngage example: MCP server for AI agents: http/);
	expect(output).toMatch(/BasicsEngage example: new segment to sent campaign: http/);

	// what it printed works
	expect((await fetch(editor)).status).toBe(200);
	await expect(login(editor, DEV_OWNER)).resolves.toEqual({
		cookie: expect.stringContaining('n8n-auth='),
	});
	expect(await (await fetch(form)).text()).toContain('Join Acme');
	const mcp = new Client({ name: 'dev-command-e2e', version: '1.0.0' });
	const mcpTransport = new StreamableHTTPClientTransport(new URL(mcpServer));
	await mcp.connect(mcpTransport);
	const { tools } = await mcp.listTools();
	expect(tools.map((t) => t.name).sort()).toEqual(['Add_Profiles', 'Send_Email']);
	await mcpTransport.terminateSession();
	await mcp.close();
	const send = await fetch(`${sandboxUrl}/email/send`, {
		method: 'POST',
		headers: { authorization: `Bearer ${DEMO_API_KEY}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			to: 'jane@customer.test',
			from: 'hello@example.com',
			subject: 'Hi',
			text: 'Hello',
		}),
	});
	expect(send.status).toBe(200);
	await waitForOutput(/\[sandbox\] \S+ POST \/email\/send 200/, 5_000);

	// the log names what an answer does not show: a sent campaign's recipients
	const post = async (route, body, auth = 'authorization') => {
		const res = await fetch(`${sandboxUrl}${route}`, {
			method: 'POST',
			headers: { [auth]: `Bearer ${DEMO_API_KEY}`, 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		expect(res.status).toBe(200);
		return (await res.json()).data;
	};
	const { listId } = await post('/list/create', { listName: 'Dev', listDescription: 'e2e' });
	await post(
		'/list/addProfiles',
		{ listId, profiles: [{ email: 'ann@customer.test' }] },
		'authroization',
	);
	const { campaign } = await post('/campaign/create', {
		name: 'Dev',
		subject: 'Hi',
		recepientList: [listId],
	});
	await post('/campaign/send', { campaignId: campaign._id });
	await waitForOutput(
		new RegExp(
			`\\[sandbox\\] \\S+ POST /campaign/send 200 \\d+ms campaign ${campaign._id} sent to 1 recipient: ann@customer\\.test`,
		),
		5_000,
	);

	// Ctrl-C in a terminal sends SIGINT to the whole foreground group (npm and node dev/dev.mjs)
	const started = descendants(child.pid);
	expect(started.length).toBeGreaterThanOrEqual(3); // npm, dev.mjs, n8n (+ its task runner)
	const exited = new Promise((resolve) => child.on('exit', resolve));
	process.kill(-child.pid, 'SIGINT');
	let timer;
	await Promise.race([
		exited,
		new Promise((_, reject) => {
			timer = setTimeout(() => reject(new Error(`npm run dev did not exit:\n${output}`)), 60_000);
		}),
	]).finally(() => clearTimeout(timer));
	expect(output).toContain('[dev] stopped.');

	// nothing it started is left, and the ports are free again
	await new Promise((r) => setTimeout(r, 500));
	expect(started.filter(alive)).toEqual([]);
	await expect(fetch(editor)).rejects.toThrow();
	await expect(fetch(`${sandboxUrl}/email/send`, { method: 'POST' })).rejects.toThrow();
}, 300_000);
