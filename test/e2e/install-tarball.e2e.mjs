// README's install route (the package is not on npm yet), as a user follows it: `npm pack`, then
// README's own commands (the block after its `install-from-tarball` marker, run by bash as
// written) in a fresh home folder, then n8n started on that folder WITHOUT the repository's
// installer. n8n has to load the node: a workflow with it has to send one email to the sandbox.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { DEMO_API_KEY, restClient, SANDBOX_CREDENTIAL } from '../../dev/n8n-setup.mjs';
import { nodeOutput } from './executions.mjs';
import { setupOwner, startN8n } from '../../dev/start-n8n.mjs';
import {
	buildWorkflow,
	importWorkflow,
	log,
	NODE_TYPE,
	PACKAGE,
	REPO_DIR,
	runByHand,
} from './helpers.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require('../sandbox/server.js');

const MARKER = '<!-- install-from-tarball';

/** The shell block that follows the marker in README.md, and the tarball path it names. */
function readmeInstallBlock() {
	const readme = fs.readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
	const at = readme.indexOf(MARKER);
	if (at < 0) throw new Error(`README.md has no ${MARKER} marker`);
	const block = readme.slice(at).match(/```sh\n([\s\S]*?)```/);
	if (!block) throw new Error(`no \`\`\`sh block after ${MARKER} in README.md`);
	// README's lines are indented under a list item
	const script = block[1].replace(/^[ \t]+/gm, '');
	const tarball = script.match(/\S+\.tgz/)?.[0];
	return { script, tarball };
}

/** The user's shell: their PATH and a fresh HOME, nothing from this npm run or jest. */
function userEnv(home) {
	const env = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (/^(npm_|NODE_ENV$|NODE_OPTIONS$|INIT_CWD$)/i.test(key)) continue;
		env[key] = value;
	}
	return { ...env, HOME: home };
}

const workflow = buildWorkflow('beTarballCheck01', 'installed from the tarball', [
	{ name: 'Run it', type: 'n8n-nodes-base.manualTrigger' },
	{
		name: 'Send Email',
		type: NODE_TYPE,
		parameters: {
			resource: 'email',
			operation: 'send',
			to: 'jane@customer.test',
			from: 'hello@example.com',
			subject: 'Installed from the tarball',
			content: 'text',
			text: 'Hello from n8n',
		},
	},
]);

let tmp;
let home;
let tarball;
let install;
let sandbox;
let n8n;

beforeAll(async () => {
	tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-tarball-e2e-'));
	home = path.join(tmp, 'home');
	await fsp.mkdir(home);

	// README step 1 (test/e2e/prepare.mjs has run `npm run build`): `npm pack`, into tmp
	const packDir = path.join(tmp, 'pack');
	await fsp.mkdir(packDir);
	const [{ filename }] = JSON.parse(
		execFileSync('npm', ['pack', '--json', '--pack-destination', packDir], {
			cwd: REPO_DIR,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}),
	);
	tarball = path.join(packDir, filename);

	// README step 2, as written, with the real tarball path
	const block = readmeInstallBlock();
	install = { ...block };
	if (block.tarball && path.basename(block.tarball) === filename) {
		const script = block.script.replace(block.tarball, tarball);
		log(`README's install commands:\n${script}`);
		const t0 = Date.now();
		install.result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
			cwd: home,
			env: userEnv(home),
			encoding: 'utf8',
		});
		log(`they took ${((Date.now() - t0) / 1000).toFixed(1)}s (exit ${install.result.status})`);
	}

	sandbox = await startSandbox({ port: 0 });
	if (install.result?.status === 0) {
		// README step 3: start n8n on that folder; no communityPackageDir, so nothing else installs it
		n8n = await startN8n({ userFolder: home, onProgress: log });
	}
}, 300_000);

afterAll(async () => {
	await n8n?.stop();
	await sandbox?.close();
	if (process.env.E2E_KEEP) log(`kept ${tmp}`);
	else if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
}, 60_000);

beforeEach(() => sandbox.reset());

test("README's install commands name this version's tarball and succeed", () => {
	expect(path.basename(install.tarball ?? '(none)')).toBe(path.basename(tarball));
	expect(install.script).toMatch(/mkdir -p ~\/\.n8n\/nodes/);
	const { status, stdout, stderr } = install.result;
	if (status !== 0)
		throw new Error(`README's commands failed (exit ${status}):\n${stdout}\n${stderr}`);
});

test('~/.n8n/nodes holds the package and nothing else: no second n8n-workflow', async () => {
	const nodesDir = path.join(home, '.n8n', 'nodes');
	const installed = (await fsp.readdir(path.join(nodesDir, 'node_modules'))).filter(
		(name) => !name.startsWith('.'),
	);
	expect(installed).toEqual([PACKAGE.name]);
	const { dependencies } = JSON.parse(
		await fsp.readFile(path.join(nodesDir, 'package.json'), 'utf8'),
	);
	expect(Object.keys(dependencies)).toEqual([PACKAGE.name]);
	for (const file of [...PACKAGE.n8n.nodes, ...PACKAGE.n8n.credentials]) {
		expect(fs.existsSync(path.join(nodesDir, 'node_modules', PACKAGE.name, file))).toBe(true);
	}
});

// Saved and run over REST as in the editor (each `n8n` CLI call boots a whole n8n); the wrong
// key's run keeps `n8n execute`, whose output shows how n8n takes the node's error class.
const credential = { name: SANDBOX_CREDENTIAL.name, type: SANDBOX_CREDENTIAL.type };
let rest; // the owner's session

test('n8n loads the node: a workflow with it runs and sends one email to the sandbox', async () => {
	rest = restClient(n8n.url, (await setupOwner(n8n.url)).cookie);
	credential.data = { apiKey: DEMO_API_KEY, baseUrl: sandbox.baseUrl };
	credential.id = (await rest.post('/rest/credentials', credential)).id;
	workflow.nodes.find((node) => node.type === NODE_TYPE).credentials = {
		basicsEngageApi: { id: credential.id, name: credential.name },
	};
	await importWorkflow({ rest }, workflow, { publish: false });

	const run = await runByHand({ rest, n8nDir: n8n.n8nDir }, workflow.id);
	expect(run.status).toBe('success');
	expect(nodeOutput(run, 'Send Email')).toEqual([
		expect.objectContaining({ status: 'success', messageId: expect.any(String) }),
	]);
	expect(sandbox.requests.map((r) => [r.path, r.body.subject])).toEqual([
		['/email/send', 'Installed from the tarball'],
	]);
});

test("the node's errors are n8n's own: a wrong key fails with the node's message", async () => {
	const { id, ...saved } = credential;
	await rest.patch(`/rest/credentials/${id}`, {
		...saved,
		data: { ...saved.data, apiKey: 'not_a_valid_key' },
	});
	const res = await n8n.runCli(['execute', `--id=${workflow.id}`, '--rawOutput']);
	expect(res.code).not.toBe(0);
	// with a second n8n-workflow, n8n prints the bare class name "NodeApiError" and a stack instead
	expect(res.stdout).toContain('BasicsEngage rejected the API key');
	expect(res.stdout).not.toMatch(/^NodeApiError$/m);
	expect(sandbox.requests.filter((r) => r.path === '/email/send')).toHaveLength(1);
});
