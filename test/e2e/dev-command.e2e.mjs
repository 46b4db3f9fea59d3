// `npm run dev` as a user runs it: it prints what runs where, everything it prints works, and
// Ctrl-C (SIGINT to the terminal's foreground process group) stops all it started.
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { login } from '../../dev/start-n8n.mjs';
import { DEMO_API_KEY, DEV_OWNER } from '../../dev/n8n-setup.mjs';
import { descendants } from './processes.mjs';
import { spawnDev, startWatchdog } from './helpers.mjs';

// stops npm run dev and removes tmp even if jest is interrupted (afterAll does not run then)
const watchdog = startWatchdog();
const tmp = watchdog.tempDir('basicsengage-dev-e2e-');
afterAll(() => watchdog.release());

test('npm run dev starts the sandbox and n8n, prints how to use them, and Ctrl-C stops everything', async () => {
	// --no-build: the e2e run built the package already; free ports
	const dev = spawnDev({ args: ['--no-build'], userFolder: path.join(tmp, 'n8n') });
	watchdog.stopTree(dev.child.pid);
	await dev.waitFor(/\[dev\] ready in/, 240_000);
	const { output } = dev;

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
	await dev.waitFor(/\[sandbox\] \S+ POST \/email\/send 200/, 5_000);

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
	await dev.waitFor(
		new RegExp(
			`\\[sandbox\\] \\S+ POST /campaign/send 200 \\d+ms campaign ${campaign._id} sent to 1 recipient: ann@customer\\.test`,
		),
		5_000,
	);

	// Ctrl-C in a terminal sends SIGINT to the whole foreground group (npm and node dev/dev.mjs)
	const started = descendants(dev.child.pid);
	expect(started.length).toBeGreaterThanOrEqual(3); // npm, dev.mjs, n8n (+ its task runner)
	// nothing it started is left, and the ports are free again
	expect(await dev.interrupt()).toEqual([]);
	await expect(fetch(editor)).rejects.toThrow();
	await expect(fetch(`${sandboxUrl}/email/send`, { method: 'POST' })).rejects.toThrow();
}, 300_000);
