// @ts-check
'use strict';

/**
 * One measurement of `npm run bench`, in a fresh process (forked by bench/run.js), so each
 * peak RSS belongs to one run alone.
 *
 *   1. load what the runner needs and run a small warm-up (same parameters, few items);
 *   2. tell the parent `ready`; the parent resets the sandbox and answers `go`;
 *   3. build the input items, time the run, check its output, report and exit.
 *
 * Runners: `node` (the BasicsEngage node in n8n-core's WorkflowExecute, via test/harness),
 * `floor` (bench/floor: only reads the same per-item parameters, same engine), `raw` (axios with
 * a keep-alive agent, same request bodies), `helper` (Send Email: the floor plus one
 * this.helpers.httpRequest per item at the same concurrency; Add Profiles: the items' own fields
 * posted in the same batches through this.helpers.httpRequest), `auto` (Add Profiles with Map
 * Automatically), `passthrough` (bench/floor: reads no parameter, the engine's floor), `skip`
 * (Send Email with Skip Emails Already Sent, on n8n's own deduplication store).
 */

const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const scenarios = require('./scenarios');

/**
 * @typedef {object} WorkerSpec
 * @property {'addProfiles' | 'sendEmail'} op
 * @property {'node' | 'auto' | 'floor' | 'passthrough' | 'raw' | 'helper' | 'skip'} runner
 * @property {number} items
 * @property {number} [batchSize]      addProfiles
 * @property {number} [concurrency]    sendEmail; addProfiles in the `wan` part
 * @property {string} baseUrl          the sandbox
 * @property {string} packageDir       snapshot of the built package
 * @property {string} floorDir         bench/floor
 * @property {string} [n8nDir]         the n8n provisioned by dev/provision.mjs (runner `skip`)
 * @property {number} warmupItems
 */

/** @type {WorkerSpec} */
const spec = JSON.parse(process.argv[2]);

/** @param {any} message */
const send = (message) =>
	new Promise((resolve) => {
		if (!process.send) throw new Error('bench/worker.js must be forked with an IPC channel');
		process.send(message, () => resolve(undefined));
	});

const waitForGo = () => new Promise((resolve) => process.once('message', resolve));

// ------------------------------------------------------------------ engine runners

/**
 * Puts n8n's own deduplication store in place of the harness's in-memory one, as `n8n start`
 * does (getDataDeduplicationService: the DeduplicationHelper), on a new SQLite database that
 * n8n's DbConnection creates and migrates, as under `npm run dev`. The store's rows belong to a
 * workflow: the function returned adds one and gives its id.
 */
async function useN8nStore() {
	const n8n = (/** @type {string} */ id) =>
		require(require.resolve(id, { paths: [/** @type {string} */ (spec.n8nDir)] }));
	process.env.DB_TYPE = 'sqlite';
	process.env.N8N_LOG_LEVEL = 'warn';
	// In the bench's temporary folder, which holds the package snapshot and goes at its end.
	process.env.N8N_USER_FOLDER = fs.mkdtempSync(path.join(path.dirname(spec.packageDir), 'n8n-'));
	const connection = n8n('@n8n/di').Container.get(n8n('@n8n/db').DbConnection);
	await connection.init();
	await connection.migrate();
	const { coreRequire } = require('../test/harness/resolve');
	const { DataDeduplicationService } = coreRequire('n8n-core');
	DataDeduplicationService.instance = undefined;
	await DataDeduplicationService.init(n8n('n8n/dist/deduplication').getDataDeduplicationService());
	return async () => {
		const id = randomUUID();
		await connection.dataSource.query(
			'INSERT INTO workflow_entity (id, name, active, versionId) VALUES (?, ?, 0, ?)',
			[id, id, id],
		);
		return id;
	};
}

/** @returns {Promise<(items: any[]) => Promise<string | undefined>>} what a failed check found */
async function engineRunner() {
	const { runWorkflow, loadPackage } = require('../test/harness/n8n');
	const credentials = {
		basicsEngageApi: { apiKey: scenarios.API_KEY, baseUrl: spec.baseUrl },
	};

	/** @type {{ nodeType: string, parameters: any, credentials?: any }} */
	let workflow;
	/** @type {(result: any, items: any[]) => string | undefined} */
	let check;
	/** @type {() => Promise<string | undefined>} */
	let newWorkflowId = async () => undefined;
	if (spec.runner === 'node' || spec.runner === 'auto' || spec.runner === 'skip') {
		await loadPackage(spec.packageDir);
		if (spec.op === 'addProfiles') {
			const batchSize = /** @type {number} */ (spec.batchSize);
			workflow = {
				nodeType: scenarios.NODE_TYPE,
				parameters: {
					...(spec.runner === 'auto'
						? scenarios.addProfilesAutoParameters(batchSize, spec.concurrency)
						: scenarios.addProfilesNodeParameters(batchSize, spec.concurrency)),
					// The `wan` part's TLS proxy has a throwaway self-signed certificate.
					...(spec.baseUrl.startsWith('https:')
						? { requestOptions: { allowUnauthorizedCerts: true } }
						: {}),
				},
				credentials,
			};
			check = (result, items) => {
				const expected = Math.ceil(items.length / batchSize);
				const submitted = result.success.reduce(
					(/** @type {number} */ sum, /** @type {any} */ item) =>
						sum + Number(item.json.submittedCount),
					0,
				);
				if (result.success.length !== expected)
					return `${result.success.length} output items, expected ${expected}`;
				if (submitted !== items.length)
					return `${submitted} profiles submitted, expected ${items.length}`;
				return undefined;
			};
		} else {
			const skip = spec.runner === 'skip';
			if (skip) newWorkflowId = await useN8nStore(); // each run, the warm-up too: a new history
			workflow = {
				nodeType: scenarios.NODE_TYPE,
				parameters: scenarios.sendEmailNodeParameters(Number(spec.concurrency), skip),
				credentials,
			};
			check = (result, items) => {
				const sent = result.success.filter(
					(/** @type {any} */ item) => item.json.status === 'success',
				).length;
				return sent === items.length ? undefined : `${sent} emails sent of ${items.length}`;
			};
		}
	} else {
		await loadPackage(spec.floorDir);
		const { batchSize, concurrency } = spec;
		const addProfiles = spec.op === 'addProfiles';
		const helper = spec.runner === 'helper';
		const url = `${spec.baseUrl}${addProfiles ? '/list/addProfiles' : '/email/send'}`;
		const email = scenarios.emailParameters();
		const apiKey = scenarios.API_KEY;
		/** @type {Record<string, [string, any]>} each floor's node type and parameters */
		const floors = {
			'addProfiles passthrough': [scenarios.FLOOR_PASS_THROUGH_TYPE, {}],
			'addProfiles floor': [scenarios.FLOOR_ADD_PROFILES_TYPE, scenarios.profileParameters()],
			'addProfiles helper': [scenarios.FLOOR_ADD_PROFILES_HTTP_TYPE, { url, batchSize }],
			'sendEmail floor': [scenarios.FLOOR_SEND_EMAIL_TYPE, email],
			'sendEmail helper': [
				scenarios.FLOOR_SEND_EMAIL_HTTP_TYPE,
				{ ...email, url, apiKey, concurrency },
			],
		};
		const [nodeType, parameters] = floors[`${spec.op} ${spec.runner}`];
		workflow = { nodeType, parameters };
		// One output item per item; Add Profiles' helper floor, one per batch.
		const expected = (/** @type {any[]} */ items) =>
			addProfiles && helper ? Math.ceil(items.length / Number(spec.batchSize)) : items.length;
		check = (result, items) =>
			result.success.length === expected(items)
				? undefined
				: `${result.success.length} output items, expected ${expected(items)}`;
	}

	return async (items) => {
		const result = await runWorkflow({ ...workflow, items, workflowId: await newWorkflowId() });
		const failure = result.error ?? result.nodeError;
		return failure ? `run failed: ${failure.message}` : check(result, items);
	};
}

// ------------------------------------------------------------------ raw client

/** @returns {Promise<(items: any[]) => Promise<string | undefined>>} what a failed check found */
async function rawRunner() {
	const axios = require('axios').default;
	const concurrency = spec.op === 'sendEmail' ? /** @type {number} */ (spec.concurrency) : 1;
	const agentOptions = { keepAlive: true, maxSockets: concurrency };
	const client = axios.create({
		baseURL: spec.baseUrl,
		httpAgent: new http.Agent(agentOptions),
		httpsAgent: new https.Agent({ ...agentOptions, rejectUnauthorized: false }),
		validateStatus: () => true,
		// What the node's requests ask for too: plain JSON, no compression negotiation surprises.
		headers:
			spec.op === 'addProfiles' ? scenarios.ADD_PROFILES_HEADERS : scenarios.SEND_EMAIL_HEADERS,
	});

	let failed = 0;
	const post = async (/** @type {string} */ url, /** @type {any} */ body) => {
		if ((await client.post(url, body)).status !== 200) failed += 1;
	};
	const batchSize = Number(spec.batchSize);
	return async (items) => {
		failed = 0;
		if (spec.op === 'addProfiles') {
			for (let start = 0; start < items.length; start += batchSize)
				await post(
					'/list/addProfiles',
					scenarios.addProfilesBody(items.slice(start, start + batchSize)),
				);
		} else {
			let next = 0;
			const lane = async () => {
				while (next < items.length)
					await post('/email/send', scenarios.sendEmailBody(items[next++]));
			};
			await Promise.all(Array.from({ length: concurrency }, lane));
		}
		return failed ? `${failed} requests failed` : undefined;
	};
}

// ------------------------------------------------------------------ main

async function main() {
	const run = spec.runner === 'raw' ? await rawRunner() : await engineRunner();

	// Warm-up: loads the lazily required modules and lets the JIT see the hot paths once.
	const warmupCheck = await run(scenarios.contacts(Math.min(spec.warmupItems, spec.items)));
	if (warmupCheck) throw new Error(`warm-up failed: ${warmupCheck}`);

	await send({ type: 'ready' });
	await waitForGo();

	const rssBefore = process.memoryUsage().rss;
	const items = scenarios.contacts(spec.items);
	const started = performance.now();
	const check = await run(items);
	const wallMs = performance.now() - started;
	const peakRss = process.resourceUsage().maxRSS * 1024;

	await send({ type: 'result', wallMs, check, rssBefore, peakRss });
	// Keep-alive sockets would keep the process alive; --cpu-prof still writes its profile.
	process.exit(0);
}

main().catch(async (error) => {
	try {
		await send({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
	} finally {
		process.exit(1);
	}
});
