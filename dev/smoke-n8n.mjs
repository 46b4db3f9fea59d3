#!/usr/bin/env node
// End-to-end check of dev/provision.mjs + dev/start-n8n.mjs, independent of our own package:
// builds a throwaway community package (one declarative node + one credential, plain JS) in a
// temp folder, starts n8n with it installed, and checks that
//   1. `n8n export:nodes` (CLI, no owner needed) lists its node type,
//   2. after `POST /rest/owner/setup`, GET /types/nodes.json and /types/credentials.json list them,
//   3. `n8n import:credentials` and `n8n import:workflow` work against the same user folder
//      while the server runs, and the server sees the imported items over REST,
//   4. `n8n execute --id=<workflow>` runs the community node against a local mock API.
// Usage: node dev/smoke-n8n.mjs [--package DIR] [--keep]
//   --package DIR  use a built package folder instead of the throwaway one (skips steps 3-4)
//   --keep         keep the temp user folder (its path is printed)

import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { startN8n, setupOwner, login } from './start-n8n.mjs';

const argv = process.argv.slice(2);
const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const keep = argv.includes('--keep');

const PROBE_NODE = `'use strict';
Object.defineProperty(exports, '__esModule', { value: true });
exports.DevProbe = void 0;
const n8n_workflow_1 = require('n8n-workflow');
class DevProbe {
	constructor() {
		this.description = {
			displayName: 'DevProbe',
			name: 'devProbe',
			icon: 'file:devprobe.svg',
			group: ['transform'],
			version: 1,
			subtitle: '={{$parameter["operation"]}}',
			description: 'Throwaway declarative node',
			defaults: { name: 'DevProbe' },
			inputs: [n8n_workflow_1.NodeConnectionTypes.Main],
			outputs: [n8n_workflow_1.NodeConnectionTypes.Main],
			credentials: [{ name: 'devProbeApi', required: true }],
			requestDefaults: { baseURL: '={{$credentials.baseUrl}}', headers: { Accept: 'application/json' } },
			properties: [
				{
					displayName: 'Operation',
					name: 'operation',
					type: 'options',
					noDataExpression: true,
					options: [{ name: 'Ping', value: 'ping', action: 'Ping the API', routing: { request: { method: 'GET', url: '/ping' } } }],
					default: 'ping',
				},
			],
		};
	}
}
exports.DevProbe = DevProbe;
`;

const PROBE_CREDENTIAL = `'use strict';
Object.defineProperty(exports, '__esModule', { value: true });
exports.DevProbeApi = void 0;
class DevProbeApi {
	constructor() {
		this.name = 'devProbeApi';
		this.displayName = 'DevProbe API';
		this.properties = [
			{ displayName: 'API Key', name: 'apiKey', type: 'string', typeOptions: { password: true }, default: '' },
			{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: 'http://127.0.0.1:9' },
		];
		this.authenticate = { type: 'generic', properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } } };
		this.test = { request: { baseURL: '={{$credentials.baseUrl}}', url: '/ping' } };
	}
}
exports.DevProbeApi = DevProbeApi;
`;

async function writeProbePackage(dir) {
	await fsp.mkdir(path.join(dir, 'dist', 'nodes', 'DevProbe'), { recursive: true });
	await fsp.mkdir(path.join(dir, 'dist', 'credentials'), { recursive: true });
	const pkg = {
		name: 'n8n-nodes-devprobe',
		version: '0.0.1',
		license: 'MIT',
		keywords: ['n8n-community-node-package'],
		files: ['dist'],
		n8n: {
			n8nNodesApiVersion: 1,
			strict: true,
			credentials: ['dist/credentials/DevProbeApi.credentials.js'],
			nodes: ['dist/nodes/DevProbe/DevProbe.node.js'],
		},
		peerDependencies: { 'n8n-workflow': '*' },
	};
	await fsp.writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
	await fsp.writeFile(path.join(dir, 'dist', 'nodes', 'DevProbe', 'DevProbe.node.js'), PROBE_NODE);
	await fsp.writeFile(
		path.join(dir, 'dist', 'nodes', 'DevProbe', 'devprobe.svg'),
		'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="10" fill="#4a90d9"/></svg>\n',
	);
	await fsp.writeFile(path.join(dir, 'dist', 'credentials', 'DevProbeApi.credentials.js'), PROBE_CREDENTIAL);
	return pkg;
}

function startMockApi() {
	const requests = [];
	const server = http.createServer((req, res) => {
		requests.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
		res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify({ pong: true, path: req.url }));
	});
	return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, requests, port: server.address().port })));
}

const step = (msg) => console.log(`\n== ${msg}`);

const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'n8n-smoke-'));
let n8n;
let mock;
try {
	let packageDir = opt('--package');
	let pkg;
	if (packageDir) {
		pkg = JSON.parse(await fsp.readFile(path.join(packageDir, 'package.json'), 'utf8'));
	} else {
		packageDir = path.join(tmp, 'n8n-nodes-devprobe');
		pkg = await writeProbePackage(packageDir);
	}
	const userFolder = path.join(tmp, 'user');

	step(`start n8n with ${pkg.name}@${pkg.version}`);
	const t0 = Date.now();
	n8n = await startN8n({ userFolder, communityPackageDir: packageDir });
	console.log(`ready at ${n8n.url} in ${((Date.now() - t0) / 1000).toFixed(1)}s; log ${n8n.logFile}`);

	step('n8n export:nodes (CLI)');
	const nodesFile = path.join(tmp, 'nodes.json');
	const exp = await n8n.runCli(['export:nodes', `--output=${nodesFile}`]);
	assert.equal(exp.code, 0, exp.stdout + exp.stderr);
	const exported = JSON.parse(await fsp.readFile(nodesFile, 'utf8'));
	const ours = exported.filter((n) => n.name.startsWith(`${pkg.name}.`)).map((n) => n.name);
	console.log(`${exported.length} node types, ours: ${ours.join(', ')}`);
	assert.ok(ours.length > 0, `no ${pkg.name}.* node type in export:nodes`);

	step('owner setup + REST node/credential types');
	await setupOwner(n8n.url);
	const { cookie } = await login(n8n.url); // POST /rest/login works too, for a reused user folder
	assert.match(cookie, /n8n-auth=/);
	const get = async (p) => {
		const res = await fetch(n8n.url + p, { headers: { cookie } });
		assert.equal(res.status, 200, `GET ${p} -> ${res.status}`);
		return await res.json();
	};
	const types = await get('/types/nodes.json');
	const restOurs = types.filter((n) => n.name.startsWith(`${pkg.name}.`)).map((n) => n.name);
	console.log(`/types/nodes.json: ${types.length} node types, ours: ${restOurs.join(', ')}`);
	assert.ok(restOurs.length > 0);
	const credTypes = (await get('/types/credentials.json')).map((c) => c.name);
	const ourCreds = (pkg.n8n.credentials ?? []).length;
	console.log(`/types/credentials.json: ${credTypes.length} credential types (package declares ${ourCreds})`);

	if (!opt('--package')) {
		assert.ok(credTypes.includes('devProbeApi'));
		mock = await startMockApi();

		step('n8n import:credentials + import:workflow (CLI, server running)');
		const credFile = path.join(tmp, 'credentials.json');
		await fsp.writeFile(
			credFile,
			JSON.stringify([
				{ id: 'devProbeCred01', name: 'DevProbe account', type: 'devProbeApi', data: { apiKey: 'secret-key', baseUrl: `http://127.0.0.1:${mock.port}` } },
			]),
		);
		const ic = await n8n.runCli(['import:credentials', `--input=${credFile}`]);
		console.log(ic.stdout.trim().split('\n').slice(-1)[0]);
		assert.equal(ic.code, 0, ic.stdout + ic.stderr);

		const wfFile = path.join(tmp, 'workflow.json');
		await fsp.writeFile(
			wfFile,
			JSON.stringify({
				id: 'devProbeWf00001',
				name: 'DevProbe smoke',
				active: false,
				nodes: [
					{ id: 'a1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
					{
						id: 'a2',
						name: 'DevProbe',
						type: 'n8n-nodes-devprobe.devProbe',
						typeVersion: 1,
						position: [220, 0],
						parameters: { operation: 'ping' },
						credentials: { devProbeApi: { id: 'devProbeCred01', name: 'DevProbe account' } },
					},
				],
				connections: { Start: { main: [[{ node: 'DevProbe', type: 'main', index: 0 }]] } },
				settings: {},
			}),
		);
		const iw = await n8n.runCli(['import:workflow', `--input=${wfFile}`]);
		console.log(iw.stdout.trim().split('\n').slice(-1)[0]);
		assert.equal(iw.code, 0, iw.stdout + iw.stderr);

		const wfs = await get('/rest/workflows');
		const creds = await get('/rest/credentials');
		console.log(`server sees workflows: ${wfs.data.map((w) => w.name).join(', ')}; credentials: ${creds.data.map((c) => c.name).join(', ')}`);
		assert.ok(wfs.data.some((w) => w.id === 'devProbeWf00001'));
		assert.ok(creds.data.some((c) => c.id === 'devProbeCred01'));

		step('n8n execute --id=devProbeWf00001 (CLI)');
		const ex = await n8n.runCli(['execute', '--id=devProbeWf00001', '--rawOutput']);
		assert.equal(ex.code, 0, ex.stdout + ex.stderr);
		console.log(`mock API got: ${JSON.stringify(mock.requests)}`);
		assert.deepEqual(mock.requests.at(-1), { method: 'GET', url: '/ping', authorization: 'Bearer secret-key' });
		assert.match(ex.stdout, /"pong": ?true/);
	}

	step('stop');
	console.log(await n8n.stop());
	n8n = undefined;
	console.log('\nsmoke: 1 passed, 0 failed');
} catch (error) {
	console.error(error);
	console.log('\nsmoke: 0 passed, 1 failed');
	process.exitCode = 1;
} finally {
	await n8n?.stop();
	mock?.server.close();
	if (keep) console.log(`kept ${tmp}`);
	else await fsp.rm(tmp, { recursive: true, force: true });
}
