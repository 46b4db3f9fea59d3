// `npm run dev -- --watch` as a developer runs it, in a temporary copy of the checkout (no file of
// the checkout changes): everything it prints works; a saved change to the node's source is served
// by the n8n already running (its hot reload, no restart: `POST /rest/node-types`, what the editor
// asks when it opens a node, and `/types/nodes.json`); Ctrl-C (SIGINT to the terminal's foreground
// process group) stops all it started. The watchdog removes everything, also when jest is killed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { DEMO_API_KEY, DEV_OWNER, restClient } from '../../dev/n8n-setup.mjs';
import { login } from '../../dev/start-n8n.mjs';
import {
	connectMcp,
	log,
	NODE_TYPE,
	PACKAGE,
	REPO_DIR,
	spawnDev,
	startWatchdog,
	until,
} from './helpers.mjs';
import { descendants } from './processes.mjs';

const NODE_FILE = 'nodes/BasicsEngage/BasicsEngage.node.ts';

// stops npm run dev and removes tmp even if jest is interrupted (afterAll does not run then)
const watchdog = startWatchdog();
const tmp = watchdog.tempDir('basicsengage-dev-e2e-');
afterAll(() => watchdog.release());

/** The files git tracks in `from`, as they are in its working tree, into `to`; node_modules linked. */
function copyCheckout(from, to) {
	const files = execFileSync('git', ['ls-files', '-z'], { cwd: from, encoding: 'utf8' })
		.split('\0')
		.filter(Boolean);
	for (const file of files) {
		const source = path.join(from, file);
		if (!fs.existsSync(source)) continue; // deleted in the working tree
		fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
		fs.cpSync(source, path.join(to, file), { verbatimSymlinks: true });
	}
	fs.symlinkSync(fs.realpathSync(path.join(from, 'node_modules')), path.join(to, 'node_modules'));
}

/** The node's description as n8n's REST endpoint for node types gives it. */
async function servedDescription(rest) {
	const [type] = await rest.post('/rest/node-types', {
		nodeInfos: [{ name: NODE_TYPE, version: 1 }],
	});
	return type.description;
}

test('npm run dev -- --watch prints how to use what it started, all of it works, a saved change to the node is served by the running n8n, and Ctrl-C stops everything', async () => {
	const repo = path.join(tmp, 'repo');
	copyCheckout(REPO_DIR, repo);
	const checkoutSource = fs.readFileSync(path.join(REPO_DIR, NODE_FILE), 'utf8');
	// it builds the copy itself, as `npm run dev` does; free ports
	const dev = spawnDev({ args: ['--watch'], cwd: repo, userFolder: path.join(tmp, 'n8n') });
	watchdog.stopTree(dev.child.pid);
	await dev.waitFor(/\[dev\] --watch: watching nodes\/ and credentials\//, 240_000);
	const { output } = dev;
	const editor = output.match(/editor:\s+(http:\/\/localhost:\d+)/)[1];
	log(
		`npm run dev -- --watch with n8n ${output.match(/n8n (\S+) editor:/)[1]}: ${output.match(/\[dev\] ready in \S+/)[0]}`,
	);

	const sandboxUrl = output.match(
		/BasicsEngage sandbox: (http:\/\/localhost:\d+\/api\/v0\/dev)/,
	)[1];
	const form = output.match(/sign-up form:\s+(\S+)/)[1];
	const mcpServer = output.match(/MCP server:\s+(\S+) \(Streamable HTTP\)/)[1];
	expect(output).toContain(`owner login:        ${DEV_OWNER.email} / ${DEV_OWNER.password}`);
	expect(output).toContain(`API key:            ${DEMO_API_KEY}`);
	for (const example of [
		'welcome new sign-ups',
		'nightly contact sync',
		'MCP server for AI agents',
		'new segment to sent campaign',
	])
		expect(output).toContain(`BasicsEngage example: ${example}: http`);

	// what it printed works
	expect((await fetch(editor)).status).toBe(200);
	const { cookie } = await login(editor, DEV_OWNER);
	expect(cookie).toContain('n8n-auth=');
	expect(await (await fetch(form)).text()).toContain('Join Acme');
	const mcp = await connectMcp(mcpServer, 'dev-e2e');
	const { tools } = await mcp.client.listTools();
	expect(tools.map((t) => t.name).sort()).toEqual(['Add_Profiles', 'Send_Email']);
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
	const sentTo = `campaign ${campaign._id} sent to 1 recipient: ann@customer\\.test`;
	await dev.waitFor(
		new RegExp(`\\[sandbox\\] \\S+ POST /campaign/send 200 \\d+ms ${sentTo}`),
		5_000,
	);

	// --watch: the served description is the source's; a saved change is served without a restart
	const rest = restClient(editor, cookie);

	const source = fs.readFileSync(path.join(repo, NODE_FILE), 'utf8');
	const before = await servedDescription(rest);
	expect(source).toContain(`'${before}'`); // the served text is the one in the source
	const after = `Changed by the --watch test ${Date.now()}`;

	// n8n's log: a line for each time n8n was started, and n8n's own lines
	const n8nLog = () => fs.readFileSync(path.join(tmp, 'n8n', 'n8n.log'), 'utf8');
	const starts = () => n8nLog().match(/^===== \S+ starting n8n@/gm).length;
	const startsBefore = starts();
	expect(n8nLog()).not.toContain('Hot reload triggered');

	// save the change, then ask n8n until it serves it
	const saved = Date.now();
	fs.writeFileSync(path.join(repo, NODE_FILE), source.replace(`'${before}'`, `'${after}'`));
	const served = async (read) => (await read().catch(() => undefined)) === after;
	await until(
		() => served(() => servedDescription(rest)),
		'n8n served no changed description',
		60_000,
	);
	const seconds = ((Date.now() - saved) / 1000).toFixed(1);

	// What the editor loads its node list from has it too. n8n rewrites that file after the reload
	// (in place: a read meanwhile can get half of it), so it is read until it parses and has it.
	const editorDescription = async () => {
		const res = await fetch(`${editor}/types/nodes.json`, { headers: { cookie } });
		const types = JSON.parse(await res.text());
		return types.find((t) => t.name === NODE_TYPE).description;
	};
	await until(
		() => served(editorDescription),
		'/types/nodes.json had no changed description',
		10_000,
	);

	// rebuilt by --watch, and reloaded by n8n itself
	const rebuilt = await dev.waitFor(/\[dev\] --watch: rebuilt in (\S+)s/, 5_000);
	const reloaded = await dev.waitFor(
		/\[dev\] --watch: n8n reloaded the package (\S+)s after/,
		5_000,
	);
	// by the n8n that was running: not started again
	expect(starts()).toBe(startsBefore);
	expect(n8nLog()).toContain(`Hot reload triggered for ${PACKAGE.name}`);
	log(
		`--watch: saved to served by n8n in ${seconds}s (build and copy ${rebuilt[1]}s, ` +
			`n8n's reload ${reloaded[1]}s after the copy, as npm run dev reported)`,
	);

	// Ctrl-C in a terminal sends SIGINT to the whole foreground group (npm and node dev/dev.mjs)
	expect(descendants(dev.child.pid).length).toBeGreaterThanOrEqual(3); // npm, dev.mjs, n8n (+ its task runner)
	// nothing it started is left, and the ports are free again
	expect(await dev.interrupt()).toEqual([]);
	await expect(fetch(editor)).rejects.toThrow();
	await expect(fetch(`${sandboxUrl}/email/send`, { method: 'POST' })).rejects.toThrow();
	// the checkout itself was never touched
	expect(fs.readFileSync(path.join(REPO_DIR, NODE_FILE), 'utf8')).toBe(checkoutSource);
}, 300_000);
