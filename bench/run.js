#!/usr/bin/env node
// @ts-check
'use strict';

/**
 * `npm run bench`: Add Profiles and Send Email measured against n8n's own floor, a raw client
 * and n8n's HTTP Request node, and the sign-up form's emails per second through a real n8n in
 * one process and in queue mode with two workers, in one run on this machine. See bench/README.md.
 *
 *   node bench/run.js [--runs 3] [--quick] [--only add,auto,send,memory,wan,queue,skip] [--http-items 5000]
 *                     [--cpu-prof] [--out bench/results.json] [--package-dir <dir>]
 *                     [--candidate <dir>]
 *
 * The sandbox runs in its own process (bench/sandbox-server.js); every measurement runs in a
 * fresh process (bench/worker.js). Measurements are interleaved: each round runs every
 * measurement once, in the same order, and the table reports medians over the rounds.
 */

const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { startLatencyProxy } = require('./latency-proxy');

const ROOT = path.resolve(__dirname, '..');
const BENCH = __dirname;

// ------------------------------------------------------------------ configuration

const FULL = {
	addProfiles: { items: [20_000, 100_000], batchSizes: [100, 1000] },
	sendEmail: { items: [2_000, 5_000], concurrencies: [1, 5] },
	memory: { items: [10_000, 50_000, 100_000], batchSize: 100 },
	/** Map Automatically: compared at the largest size, memory measured at each. */
	autoMap: { items: [10_000, 50_000, 100_000], batchSize: 100 },
	httpItems: 5_000,
	warmupItems: 200,
	/** Sign-up form bursts through a real n8n (bench/queue.mjs). */
	queue: { submissions: 300, concurrency: 16, warmup: 30 },
	/** Send Email with Skip Emails Already Sent through a real n8n and its store (bench/skip.mjs). */
	skip: { sizes: [10_000, 20_000] },
	/** Add Profiles behind a TLS proxy with a 40 ms round trip (bench/latency-proxy.js). */
	wan: { items: [20_000, 100_000], batchSize: 1000, concurrencies: [1, 5], rttMs: 40 },
};

/** A smoke run of the whole pipeline in about a minute; its figures mean little. */
const QUICK = {
	addProfiles: { items: [2_000], batchSizes: [100, 1000] },
	sendEmail: { items: [300], concurrencies: [1, 5] },
	memory: { items: [1_000, 2_000, 4_000], batchSize: 100 },
	autoMap: { items: [1_000, 2_000, 4_000], batchSize: 100 },
	httpItems: 500,
	warmupItems: 50,
	queue: { submissions: 40, concurrency: 8, warmup: 10 },
	skip: { sizes: [500, 1_000] },
	wan: { items: [2_000], batchSize: 1000, concurrencies: [1, 5], rttMs: 40 },
};

const GOALS = {
	addProfilesRatio: 1.25,
	sendEmailRatio: 1.3,
	/** Send Email over the least any node sending through n8n's HTTP helper can cost. */
	sendEmailOverHelperRatio: 1.15,
	fewerRequestsThanHttp: 50,
	/**
	 * Memory each further item costs (peak RSS growth per item between two consecutive sizes):
	 * the last step's may exceed the first step's by at most this factor. Equal steps = linear.
	 */
	memoryMarginalRatio: 1.2,
	/** Map Automatically over the engine floor (a node reading no parameter) + raw client. */
	autoMapRatio: 1.5,
	/**
	 * Map Automatically over a node that posts the items' fields as they are through n8n's
	 * helper: the bound Send Email has over its helper floor (the per-item checks cost a little).
	 */
	autoMapOverHelperRatio: 1.15,
	/** How many times faster Map Automatically must be than Map Each Field Manually. */
	autoMapSpeedup: 10,
};

const WORKER_TIMEOUT_MS = 20 * 60_000;

// ------------------------------------------------------------------ small helpers

/** @param {number[]} values */
function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const mb = (/** @type {number} */ bytes) => bytes / (1024 * 1024);
const fmtInt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
const fmtLoad = () =>
	os
		.loadavg()
		.map((value) => value.toFixed(2))
		.join(', ');

/** @param {string} message */
const log = (message) => process.stderr.write(`${message}\n`);

// ------------------------------------------------------------------ the package under test

/**
 * Copies the built package (package.json + dist/) to a temporary directory, so a rebuild by
 * someone else during a long bench cannot change what is measured. node_modules is linked, so
 * the package's require('n8n-workflow') gets the engine's copy, as on an n8n server.
 * @param {string} tmp
 * @param {string} source a directory with package.json and dist/ (the repo, or a patched copy)
 */
function snapshotPackage(tmp, source) {
	const dist = path.join(source, 'dist');
	if (!fs.existsSync(path.join(dist, 'nodes'))) {
		throw new Error('dist/ is missing: run `npm run build` (npm run bench does) first');
	}
	const dir = path.join(tmp, 'package');
	fs.mkdirSync(dir);
	const { name, version, n8n } = JSON.parse(
		fs.readFileSync(path.join(source, 'package.json'), 'utf8'),
	);
	fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version, n8n }, null, 2));
	fs.cpSync(dist, path.join(dir, 'dist'), { recursive: true });
	fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
	return dir;
}

// ------------------------------------------------------------------ n8n-nodes-base

/**
 * Where n8n-nodes-base comes from, first found wins:
 *   1. $BENCH_NODES_BASE (a directory holding n8n-nodes-base's package.json);
 *   2. an n8n-nodes-base installed in this repo's node_modules (not a devDependency: see README);
 *   3. the n8n runtime `npm run dev` provisions (dev/provision.mjs), outside the repo.
 * @returns {Promise<{ dir: string, version: string, source: string } | { dir?: undefined, reason: string }>}
 */
async function findNodesBase() {
	/** @type {Array<{ dir: string, source: string }>} */
	const candidates = [];
	if (process.env.BENCH_NODES_BASE) {
		candidates.push({
			dir: path.resolve(process.env.BENCH_NODES_BASE),
			source: '$BENCH_NODES_BASE',
		});
	}
	try {
		const manifest = require.resolve('n8n-nodes-base/package.json', { paths: [ROOT] });
		candidates.push({ dir: path.dirname(manifest), source: 'node_modules of this repo' });
	} catch {
		// not installed here: the usual case
	}
	try {
		const provision = await import(path.join(ROOT, 'dev', 'provision.mjs'));
		const runtime = JSON.parse(
			fs.readFileSync(path.join(ROOT, 'dev', 'n8n-runtime', 'package.json'), 'utf8'),
		);
		const n8nVersion = runtime.dependencies?.n8n;
		candidates.push({
			dir: path.join(provision.cacheRoot(), `n8n-${n8nVersion}`, 'node_modules', 'n8n-nodes-base'),
			source: `n8n ${n8nVersion} runtime provisioned by dev/provision.mjs`,
		});
	} catch {
		// no dev runtime recipe in this checkout
	}
	for (const candidate of candidates) {
		const manifest = path.join(candidate.dir, 'package.json');
		const node = path.join(candidate.dir, 'dist', 'nodes', 'HttpRequest', 'HttpRequest.node.js');
		if (fs.existsSync(manifest) && fs.existsSync(node)) {
			const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
			return { ...candidate, version };
		}
	}
	return {
		reason:
			'n8n-nodes-base not found: run `node dev/provision.mjs` once (installs the n8n runtime of ' +
			'`npm run dev` into ~/.cache) or set BENCH_NODES_BASE to a directory holding n8n-nodes-base',
	};
}

/**
 * A one-node package named n8n-nodes-base, so the harness's loadPackage() (n8n-core's
 * PackageDirectoryLoader) loads just the HTTP Request node, under its real type name
 * `n8n-nodes-base.httpRequest`, from wherever n8n-nodes-base is. Loading all ~500 nodes of
 * n8n-nodes-base would only add seconds and memory to every measurement.
 * @param {string} tmp @param {{ dir: string, version: string }} nodesBase
 */
function httpRequestPackage(tmp, nodesBase) {
	const dir = path.join(tmp, 'n8n-nodes-base-http-request');
	fs.mkdirSync(dir);
	const nodeFile = path.join(nodesBase.dir, 'dist', 'nodes', 'HttpRequest', 'HttpRequest.node.js');
	fs.writeFileSync(
		path.join(dir, 'package.json'),
		JSON.stringify({
			name: 'n8n-nodes-base',
			version: nodesBase.version,
			n8n: { nodes: [nodeFile] },
		}),
	);
	return dir;
}

// ------------------------------------------------------------------ sandbox process

/** @returns {Promise<{ baseUrl: string, call: (cmd: 'stats' | 'reset') => Promise<any>, stop: () => Promise<void> }>} */
function startSandboxProcess() {
	return new Promise((resolve, reject) => {
		const child = fork(path.join(BENCH, 'sandbox-server.js'), [], {
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		let nextId = 1;
		/** @type {Map<number, (value: any) => void>} */
		const pending = new Map();
		child.on('message', (/** @type {any} */ message) => {
			if (message.ready) {
				resolve({
					baseUrl: message.baseUrl,
					call: (cmd) =>
						new Promise((resolveCall) => {
							const id = nextId++;
							pending.set(id, resolveCall);
							child.send({ id, cmd });
						}),
					stop: () =>
						new Promise((resolveStop) => {
							if (child.exitCode !== null) return resolveStop();
							child.once('exit', () => resolveStop());
							child.disconnect();
							setTimeout(() => child.kill('SIGKILL'), 5000).unref();
						}),
				});
				return;
			}
			pending.get(message.id)?.(message.stats);
			pending.delete(message.id);
		});
		child.once('error', reject);
		child.once('exit', (code) => reject(new Error(`sandbox process exited (${code})`)));
	});
}

// ------------------------------------------------------------------ one measurement

/**
 * @typedef {object} Spec
 * @property {string} key          identifies the measurement across rounds
 * @property {'addProfiles' | 'sendEmail'} op
 * @property {import('./worker').WorkerSpec['runner']} runner
 * @property {number} items
 * @property {number} [batchSize]
 * @property {number} [concurrency]
 * @property {boolean} [candidate]   the node from the --candidate build
 * @property {boolean} [wan]         sent through the latency proxy (`wan` part)
 */

/**
 * Runs one measurement in a fresh worker process.
 * @param {Spec} spec
 * @param {{ sandbox: Awaited<ReturnType<typeof startSandboxProcess>>, packageDir: string,
 *   candidateDir?: string, httpPackageDir?: string, warmupItems: number, cpuProfDir?: string,
 *   round: number, wanBaseUrl?: string }} context
 */
function measure(spec, context) {
	const { sandbox } = context;
	const workerSpec = {
		op: spec.op,
		runner: spec.runner,
		items: spec.items,
		batchSize: spec.batchSize,
		concurrency: spec.concurrency,
		baseUrl: spec.wan ? context.wanBaseUrl : sandbox.baseUrl,
		packageDir: spec.candidate ? context.candidateDir : context.packageDir,
		floorDir: path.join(BENCH, 'floor'),
		httpPackageDir: context.httpPackageDir,
		warmupItems: context.warmupItems,
	};
	const profileName = `${spec.key.replace(/[^a-z0-9]+/gi, '-')}-round${context.round}.cpuprofile`;
	const profiled =
		context.cpuProfDir &&
		['node', 'auto', 'floor', 'passthrough', 'helper', 'raw'].includes(spec.runner);
	const execArgv = profiled
		? [
				'--cpu-prof',
				'--cpu-prof-dir',
				/** @type {string} */ (context.cpuProfDir),
				'--cpu-prof-name',
				profileName,
			]
		: [];

	return new Promise((resolve, reject) => {
		const child = fork(path.join(BENCH, 'worker.js'), [JSON.stringify(workerSpec)], {
			cwd: ROOT,
			execArgv,
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`${spec.key}: no result after ${WORKER_TIMEOUT_MS / 60_000} minutes`));
		}, WORKER_TIMEOUT_MS);
		/** @type {any} */
		let result;
		child.on('message', async (/** @type {any} */ message) => {
			if (message.type === 'ready') {
				// Requests of the warm-up are not counted.
				await sandbox.call('reset');
				child.send({ type: 'go' });
			} else if (message.type === 'result') {
				result = message;
			} else if (message.type === 'error') {
				result = message;
			}
		});
		child.once('exit', async (code) => {
			clearTimeout(timer);
			if (!result || result.type === 'error') {
				reject(new Error(`${spec.key}: worker failed (exit ${code})\n${result?.message ?? ''}`));
				return;
			}
			const stats = await sandbox.call('reset');
			resolve({
				key: spec.key,
				round: context.round,
				wallMs: result.wallMs,
				requests: stats.requests,
				profiles: stats.profiles,
				emails: stats.emails,
				failedAnswers: stats.failedAnswers,
				outputs: result.outputs,
				check: result.check ?? null,
				rssBefore: result.rssBefore,
				peakRss: result.peakRss,
				windowUs: result.windowUs,
				loadavg: os.loadavg()[0],
				...(profiled
					? { cpuProfile: path.join(/** @type {string} */ (context.cpuProfDir), profileName) }
					: {}),
			});
		});
	});
}

// ------------------------------------------------------------------ plan

const OP_PREFIX = { addProfiles: 'add', sendEmail: 'send' };

/**
 * The one spelling of a measurement's key, e.g. "add node 20000 b100" or "send floor 2000": the
 * plan names measurements with it and the table, memory figures and goals look them up by it.
 * @param {'addProfiles' | 'sendEmail'} op @param {Spec['runner']} runner @param {number} items
 * @param {{ batchSize?: number, concurrency?: number }} [variant]
 */
function measurementKey(op, runner, items, { batchSize, concurrency } = {}) {
	const suffix = batchSize ? ` b${batchSize}` : concurrency ? ` c${concurrency}` : '';
	return `${OP_PREFIX[op]} ${runner} ${items}${suffix}`;
}

/**
 * @param {typeof FULL} config
 * @param {Set<string>} only
 * @param {boolean} withHttp
 * @param {boolean} withCandidate
 * @returns {Spec[]} one round, in run order
 */
function plan(config, only, withHttp, withCandidate) {
	/** @type {Spec[]} */
	const specs = [];
	/** @param {Omit<Spec, 'key'>} fields @param {boolean} [twin] */
	const add = (fields, twin = true) => {
		const spec = { ...fields, key: measurementKey(fields.op, fields.runner, fields.items, fields) };
		if (specs.some((existing) => existing.key === spec.key)) return;
		specs.push(spec);
		// The candidate build runs right after the node, in the same rounds.
		if (withCandidate && twin && spec.runner === 'node') {
			specs.push({ ...spec, key: `${spec.key} candidate`, candidate: true });
		}
	};

	if (only.has('add')) {
		for (const items of config.addProfiles.items) {
			add({ op: 'addProfiles', runner: 'floor', items });
			for (const batchSize of config.addProfiles.batchSizes) {
				add({ op: 'addProfiles', runner: 'node', items, batchSize });
				add({ op: 'addProfiles', runner: 'raw', items, batchSize });
			}
			if (withHttp) {
				add({ op: 'addProfiles', runner: 'http', items: Math.min(items, config.httpItems) });
			}
		}
	}
	if (only.has('memory')) {
		const batchSize = config.memory.batchSize;
		for (const items of config.memory.items) {
			add({ op: 'addProfiles', runner: 'node', items, batchSize }, false);
		}
	}
	if (only.has('auto')) {
		const { items: sizes, batchSize } = config.autoMap;
		const items = sizes[sizes.length - 1];
		add({ op: 'addProfiles', runner: 'passthrough', items });
		add({ op: 'addProfiles', runner: 'raw', items, batchSize });
		add({ op: 'addProfiles', runner: 'helper', items, batchSize });
		add({ op: 'addProfiles', runner: 'node', items, batchSize });
		for (const size of sizes) add({ op: 'addProfiles', runner: 'auto', items: size, batchSize });
	}
	if (only.has('wan')) {
		// The node (Map Automatically, so the network, not expressions, is what is measured) one
		// batch at a time and at Concurrency 5, its default, and the raw keep-alive client one
		// batch at a time, all through the same TLS proxy.
		const { items: sizes, batchSize, concurrencies } = config.wan;
		for (const items of sizes) {
			for (const concurrency of concurrencies) {
				const fields = { op: 'addProfiles', runner: 'auto', items, batchSize, concurrency };
				specs.push({ ...fields, key: `wan auto ${items} c${concurrency}`, wan: true });
			}
			const raw = { op: 'addProfiles', runner: 'raw', items, batchSize };
			specs.push({ ...raw, key: `wan raw ${items} c1`, wan: true });
		}
	}
	if (only.has('send')) {
		for (const items of config.sendEmail.items) {
			add({ op: 'sendEmail', runner: 'floor', items });
			for (const concurrency of config.sendEmail.concurrencies) {
				add({ op: 'sendEmail', runner: 'node', items, concurrency });
				add({ op: 'sendEmail', runner: 'raw', items, concurrency });
				add({ op: 'sendEmail', runner: 'helper', items, concurrency });
			}
			if (withHttp) {
				add({ op: 'sendEmail', runner: 'http', items: Math.min(items, config.httpItems) });
			}
		}
	}
	return specs;
}

// ------------------------------------------------------------------ summary

/**
 * @typedef {object} Summary
 * @property {string} key
 * @property {number} items            measured items
 * @property {number} wallMs           median
 * @property {number} minMs
 * @property {number} maxMs
 * @property {number[]} requests       per round
 * @property {number} peakRss          median, bytes
 * @property {number} rssBefore        median, bytes
 * @property {string[]} checks         failed output checks, if any
 * @property {number} failedAnswers    non-2xx answers over all rounds
 */

/** @param {any[]} measurements @returns {Map<string, Summary>} */
function summarize(measurements) {
	/** @type {Map<string, any[]>} */
	const byKey = new Map();
	for (const m of measurements) byKey.set(m.key, [...(byKey.get(m.key) ?? []), m]);
	/** @type {Map<string, Summary>} */
	const out = new Map();
	for (const [key, runs] of byKey) {
		const walls = runs.map((m) => m.wallMs);
		out.set(key, {
			key,
			items: Number(key.split(' ')[2]),
			wallMs: median(walls),
			minMs: Math.min(...walls),
			maxMs: Math.max(...walls),
			requests: runs.map((m) => m.requests),
			peakRss: median(runs.map((m) => m.peakRss)),
			rssBefore: median(runs.map((m) => m.rssBefore)),
			checks: runs.filter((m) => m.check).map((m) => `round ${m.round}: ${m.check}`),
			failedAnswers: runs.reduce((sum, m) => sum + m.failedAnswers, 0),
		});
	}
	return out;
}

/**
 * Table rows: per scenario, the node, the floor, the raw client, floor + raw, and the HTTP
 * Request node (scaled per item to the scenario's N when measured on fewer items).
 * @param {typeof FULL} config @param {Set<string>} only @param {Map<string, Summary>} s
 */
function tableRows(config, only, s) {
	/** @type {any[]} */
	const rows = [];
	/**
	 * @param {string} scenario @param {string} runner @param {Summary | undefined} m
	 * @param {number} items @param {number | undefined} base floor + raw, ms
	 * @param {{ scaledFrom?: number, requests?: number, wallMs?: number, peakRss?: number }} [extra]
	 */
	const row = (scenario, runner, m, items, base, extra = {}) => {
		if (!m && extra.wallMs === undefined) return;
		const wallMs = extra.wallMs ?? /** @type {Summary} */ (m).wallMs;
		const scale = extra.scaledFrom ? items / extra.scaledFrom : 1;
		const requests = extra.requests ?? (m ? Math.round(median(m.requests) * scale) : undefined);
		rows.push({
			scenario,
			runner,
			items,
			requests,
			requestsVary: m ? new Set(m.requests).size > 1 : false,
			wallMs: wallMs * scale,
			range: m && !extra.wallMs ? [m.minMs * scale, m.maxMs * scale] : undefined,
			itemsPerSecond: items / ((wallMs * scale) / 1000),
			peakRss: extra.peakRss ?? m?.peakRss,
			ratio: base ? (wallMs * scale) / base : undefined,
			scaledFrom: extra.scaledFrom,
		});
	};

	/**
	 * The reference a scenario's ratios divide by: a floor plus the raw client.
	 * @param {string} scenario @param {string} label @param {Summary | undefined} raw
	 * @param {number} items @param {number | undefined} base
	 */
	const referenceRow = (scenario, label, raw, items, base) => {
		if (base === undefined) return;
		row(scenario, label, undefined, items, base, {
			wallMs: base,
			requests: raw ? median(raw.requests) : undefined,
		});
	};

	/**
	 * One scenario's rows: node (and candidate), floor, raw, floor + raw, `references` (more
	 * runners of the same variant, informational) and the HTTP Request node scaled per item.
	 * @param {'addProfiles' | 'sendEmail'} op @param {string} scenario @param {number} items
	 * @param {{ batchSize?: number, concurrency?: number }} variant
	 * @param {{ httpRunner: string, references?: Array<[string, Spec['runner']]> }} options
	 */
	const scenarioRows = (op, scenario, items, variant, { httpRunner, references = [] }) => {
		const floor = s.get(measurementKey(op, 'floor', items));
		const raw = s.get(measurementKey(op, 'raw', items, variant));
		const nodeKey = measurementKey(op, 'node', items, variant);
		const base = floor && raw ? floor.wallMs + raw.wallMs : undefined;
		row(scenario, 'node', s.get(nodeKey), items, base);
		row(scenario, 'node, candidate build', s.get(`${nodeKey} candidate`), items, base);
		row(scenario, 'n8n floor', floor, items, base);
		row(scenario, 'raw axios', raw, items, base);
		referenceRow(scenario, 'floor + raw', raw, items, base);
		for (const [label, runner] of references) {
			row(scenario, label, s.get(measurementKey(op, runner, items, variant)), items, base);
		}
		const httpItems = Math.min(items, config.httpItems);
		row(scenario, httpRunner, s.get(measurementKey(op, 'http', httpItems)), items, base, {
			scaledFrom: httpItems < items ? httpItems : undefined,
		});
	};

	if (only.has('add')) {
		for (const items of config.addProfiles.items) {
			for (const batchSize of config.addProfiles.batchSizes) {
				scenarioRows(
					'addProfiles',
					`Add Profiles, batch ${batchSize}`,
					items,
					{ batchSize },
					{
						httpRunner: 'HTTP Request node',
					},
				);
			}
		}
	}
	if (only.has('auto')) {
		const { items, batchSize, engineFloor, raw, helper, base } = autoMapFigures(config, s);
		const scenario = `Add Profiles, Map Automatically, batch ${batchSize}`;
		const variant = { batchSize };
		row(
			scenario,
			'node, Map Automatically',
			s.get(measurementKey('addProfiles', 'auto', items, variant)),
			items,
			base,
		);
		row(
			scenario,
			'node, Map Each Field Manually',
			s.get(measurementKey('addProfiles', 'node', items, variant)),
			items,
			base,
		);
		row(scenario, 'engine floor (reads no parameter)', engineFloor, items, base);
		row(scenario, 'raw axios', raw, items, base);
		referenceRow(scenario, 'engine floor + raw', raw, items, base);
		row(scenario, 'items\' fields posted through helpers.httpRequest', helper, items, base);
	}
	if (only.has('send')) {
		for (const items of config.sendEmail.items) {
			for (const concurrency of config.sendEmail.concurrencies) {
				scenarioRows(
					'sendEmail',
					`Send Email, concurrency ${concurrency}`,
					items,
					{ concurrency },
					{
						httpRunner: 'HTTP Request node (unbounded)',
						references: [['n8n floor + helpers.httpRequest', 'helper']],
					},
				);
			}
		}
	}
	return rows;
}

/** @param {any[]} rows */
function formatTable(rows) {
	const header = [
		'scenario',
		'runner',
		'items',
		'requests made',
		'wall time ms (min–max)',
		'items/s',
		'peak RSS MB',
		'ratio to floor + raw',
	];
	const body = rows.map((r) => [
		r.scenario,
		r.runner + (r.scaledFrom ? ` *${fmtInt(r.scaledFrom)}` : ''),
		fmtInt(r.items),
		r.requests === undefined ? '' : `${fmtInt(r.requests)}${r.requestsVary ? ' (varies!)' : ''}`,
		`${fmtInt(r.wallMs)}${r.range ? ` (${fmtInt(r.range[0])}–${fmtInt(r.range[1])})` : ''}`,
		fmtInt(r.itemsPerSecond),
		r.peakRss === undefined ? '' : mb(r.peakRss).toFixed(0),
		r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
	]);
	const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i].length)));
	const line = (/** @type {string[]} */ cells) =>
		`| ${cells.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join(' | ')} |`;
	const separator = `|${widths.map((w, i) => (i >= 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
	/** @type {string[]} */
	const lines = [line(header), separator];
	let previous = '';
	for (const [index, cells] of body.entries()) {
		const key = `${rows[index].scenario} ${rows[index].items}`;
		if (previous && key !== previous) lines.push(line(header.map(() => '')));
		previous = key;
		lines.push(line(cells));
	}
	return lines.join('\n');
}

/**
 * Map Automatically's reference: the engine floor (a node that reads no parameter) plus the raw
 * client, at the largest size. @param {typeof FULL} config @param {Map<string, Summary>} s
 */
function autoMapFigures(config, s) {
	const { items: sizes, batchSize } = config.autoMap;
	const items = sizes[sizes.length - 1];
	const engineFloor = s.get(measurementKey('addProfiles', 'passthrough', items));
	const raw = s.get(measurementKey('addProfiles', 'raw', items, { batchSize }));
	const helper = s.get(measurementKey('addProfiles', 'helper', items, { batchSize }));
	const base = engineFloor && raw ? engineFloor.wallMs + raw.wallMs : undefined;
	return { items, batchSize, engineFloor, raw, helper, base };
}

/**
 * Memory: peak RSS of an Add Profiles runner at each size (`runner` node: Map Each Field
 * Manually; auto: Map Automatically), each in a fresh process. Growth = peak RSS - RSS just before the run (after loading and warm-up). Linear
 * growth means each further item costs the same: the marginal cost per item between two
 * consecutive sizes stays flat. (A log-log slope of growth is also given, but it reads above 1
 * for linear growth with a fixed offset, such as heap V8 had reserved before the run, which
 * hides part of the smallest run's growth.)
 * @param {{ items: number[], batchSize: number }} sizes @param {'node' | 'auto'} runner
 * @param {Map<string, Summary>} s
 */
function memoryFigures({ items: sizes, batchSize }, runner, s) {
	const points = sizes
		.map((items) => {
			const m = s.get(measurementKey('addProfiles', runner, items, { batchSize }));
			if (!m) return undefined;
			const growth = m.peakRss - m.rssBefore;
			return {
				items,
				peakRssMb: mb(m.peakRss),
				rssBeforeMb: mb(m.rssBefore),
				growthMb: mb(growth),
				kbPerItem: growth / 1024 / items,
			};
		})
		.filter((p) => p !== undefined);
	let exponent;
	/** @type {Array<{ from: number, to: number, kbPerItem: number }>} */
	const steps = [];
	for (let index = 1; index < points.length; index++) {
		const [a, b] = [points[index - 1], points[index]];
		steps.push({
			from: a.items,
			to: b.items,
			kbPerItem: ((b.growthMb - a.growthMb) * 1024) / (b.items - a.items),
		});
	}
	let marginalRatio;
	if (points.length >= 2) {
		const first = points[0];
		const last = points[points.length - 1];
		exponent = Math.log(last.growthMb / first.growthMb) / Math.log(last.items / first.items);
		// Reference: the first step's cost per further item, or, if noise made that step tiny
		// or negative, the average cost per item of the run that step ends at.
		const reference = Math.max(steps[0].kbPerItem, points[1].kbPerItem);
		marginalRatio = steps[steps.length - 1].kbPerItem / reference;
	}
	return { batchSize, points, steps, marginalRatio, exponent };
}

/**
 * @param {typeof FULL} config @param {Set<string>} only @param {Map<string, Summary>} s
 * @param {{ manual: ReturnType<typeof memoryFigures>, auto: ReturnType<typeof memoryFigures> }} memory
 */
function evaluateGoals(config, only, s, memory) {
	/** @type {Array<{ goal: string, status: 'PASS' | 'MISS' | 'SKIP', detail: string }>} */
	const goals = [];
	/** @param {string} goal @param {boolean | undefined} pass @param {string} detail */
	const record = (goal, pass, detail) =>
		goals.push({ goal, status: pass === undefined ? 'SKIP' : pass ? 'PASS' : 'MISS', detail });

	if (only.has('add')) {
		for (const items of config.addProfiles.items) {
			const floor = s.get(measurementKey('addProfiles', 'floor', items));
			const http = s.get(measurementKey('addProfiles', 'http', Math.min(items, config.httpItems)));
			for (const batchSize of config.addProfiles.batchSizes) {
				const label = `Add Profiles ${fmtInt(items)} items, batch ${batchSize}`;
				const node = s.get(measurementKey('addProfiles', 'node', items, { batchSize }));
				const raw = s.get(measurementKey('addProfiles', 'raw', items, { batchSize }));
				if (!node) continue;
				if (floor && raw) {
					const ratio = node.wallMs / (floor.wallMs + raw.wallMs);
					record(
						`${label}: node <= ${GOALS.addProfilesRatio}x (floor + raw)`,
						ratio <= GOALS.addProfilesRatio,
						`${ratio.toFixed(2)}x (node ${fmtInt(node.wallMs)} ms, floor ${fmtInt(floor.wallMs)} ms + raw ${fmtInt(raw.wallMs)} ms)`,
					);
				}
				const expected = Math.ceil(items / batchSize);
				record(
					`${label}: requests made = ceil(N / batch size) = ${fmtInt(expected)}`,
					node.requests.every((count) => count === expected),
					`node made ${node.requests.join(', ')} (one per round)`,
				);
				if (http) {
					const httpRequests = median(http.requests) * (items / http.items);
					const fewer = httpRequests / median(node.requests);
					record(
						`${label}: >= ${GOALS.fewerRequestsThanHttp}x fewer requests than the HTTP Request node`,
						fewer >= GOALS.fewerRequestsThanHttp,
						`${fewer.toFixed(0)}x (${fmtInt(median(node.requests))} vs ${fmtInt(httpRequests)}${http.items < items ? `, scaled from ${fmtInt(http.items)} items` : ''})`,
					);
					const httpWall = http.wallMs * (items / http.items);
					record(
						`${label}: shorter wall time than the HTTP Request node`,
						node.wallMs < httpWall,
						`node ${fmtInt(node.wallMs)} ms vs HTTP Request ${fmtInt(httpWall)} ms${http.items < items ? ` (scaled from ${fmtInt(http.items)} items)` : ''}`,
					);
				} else {
					record(
						`${label}: >= ${GOALS.fewerRequestsThanHttp}x fewer requests than the HTTP Request node`,
						undefined,
						'HTTP Request node not measured',
					);
					record(
						`${label}: shorter wall time than the HTTP Request node`,
						undefined,
						'HTTP Request node not measured',
					);
				}
			}
		}
	}
	if (only.has('send')) {
		for (const items of config.sendEmail.items) {
			const floor = s.get(measurementKey('sendEmail', 'floor', items));
			for (const concurrency of config.sendEmail.concurrencies) {
				const node = s.get(measurementKey('sendEmail', 'node', items, { concurrency }));
				const raw = s.get(measurementKey('sendEmail', 'raw', items, { concurrency }));
				if (!node || !floor || !raw) continue;
				const label = `Send Email ${fmtInt(items)} items, concurrency ${concurrency}`;
				const ratio = node.wallMs / (floor.wallMs + raw.wallMs);
				record(
					`${label}: node <= ${GOALS.sendEmailRatio}x (floor + raw)`,
					ratio <= GOALS.sendEmailRatio,
					`${ratio.toFixed(2)}x (node ${fmtInt(node.wallMs)} ms, floor ${fmtInt(floor.wallMs)} ms + raw ${fmtInt(raw.wallMs)} ms)`,
				);
				// A community node may only send through n8n's helper, which opens a new connection
				// per request (no keep-alive). This measures our overhead over that unavoidable cost.
				const helper = s.get(measurementKey('sendEmail', 'helper', items, { concurrency }));
				if (helper) {
					const overHelper = node.wallMs / helper.wallMs;
					record(
						`${label}: node <= ${GOALS.sendEmailOverHelperRatio}x (floor + helpers.httpRequest)`,
						overHelper <= GOALS.sendEmailOverHelperRatio,
						`${overHelper.toFixed(2)}x (node ${fmtInt(node.wallMs)} ms, floor + helper ${fmtInt(helper.wallMs)} ms; floor + helper itself is ${(helper.wallMs / (floor.wallMs + raw.wallMs)).toFixed(2)}x floor + raw)`,
					);
				}
			}
		}
	}
	if (only.has('auto')) {
		const { items, batchSize, helper, base } = autoMapFigures(config, s);
		const label = `Add Profiles ${fmtInt(items)} items, batch ${batchSize}`;
		const auto = s.get(measurementKey('addProfiles', 'auto', items, { batchSize }));
		const manual = s.get(measurementKey('addProfiles', 'node', items, { batchSize }));
		if (auto && base !== undefined) {
			const ratio = auto.wallMs / base;
			record(
				`${label}: Map Automatically <= ${GOALS.autoMapRatio}x (engine floor + raw)`,
				ratio <= GOALS.autoMapRatio,
				`${ratio.toFixed(2)}x (auto ${fmtInt(auto.wallMs)} ms, engine floor + raw ${fmtInt(base)} ms)`,
			);
		}
		if (auto && helper) {
			const ratio = auto.wallMs / helper.wallMs;
			record(
				`${label}: Map Automatically <= ${GOALS.autoMapOverHelperRatio}x (the items' fields posted in the same batches through helpers.httpRequest)`,
				ratio <= GOALS.autoMapOverHelperRatio,
				`${ratio.toFixed(2)}x (auto ${fmtInt(auto.wallMs)} ms, helper ${fmtInt(helper.wallMs)} ms)`,
			);
		}
		if (auto && manual) {
			const speedup = manual.wallMs / auto.wallMs;
			record(
				`${label}: Map Automatically >= ${GOALS.autoMapSpeedup}x faster than Map Each Field Manually`,
				speedup >= GOALS.autoMapSpeedup,
				`${speedup.toFixed(1)}x (manual ${fmtInt(manual.wallMs)} ms, auto ${fmtInt(auto.wallMs)} ms)`,
			);
		}
	}
	for (const [part, name, { steps, marginalRatio }] of /** @type {const} */ ([
		['memory', 'Memory', memory.manual],
		['auto', 'Memory, Map Automatically', memory.auto],
	])) {
		if (!only.has(part)) continue;
		record(
			`${name}: peak RSS grows no faster than linearly (KB per further item, last step <= ${GOALS.memoryMarginalRatio}x first step)`,
			marginalRatio === undefined ? undefined : marginalRatio <= GOALS.memoryMarginalRatio,
			marginalRatio === undefined
				? 'needs two sizes'
				: `${marginalRatio.toFixed(2)}x; ${steps.map((step) => `${fmtInt(step.from)}→${fmtInt(step.to)}: ${step.kbPerItem.toFixed(2)} KB/item`).join(', ')}`,
		);
	}
	// Every run must have done its work: a fast run that failed would flatter the figures.
	for (const m of s.values()) {
		if (m.checks.length || m.failedAnswers) {
			record(
				`${m.key}: every run completed without errors`,
				false,
				[...m.checks, `${m.failedAnswers} non-2xx answers`].join('; '),
			);
		}
	}
	return goals;
}

// ------------------------------------------------------------------ queue mode

/**
 * One row per setup of bench/queue.mjs: median wall time, emails/s, executions per worker
 * (summed over the rounds) and the ratio of emails/s to the one-process setup.
 * @param {{ setups: Array<{ key: string, label: string }>, measurements: any[] }} queue
 */
function queueRows(queue) {
	const rows = queue.setups.map(({ key, label }) => {
		const runs = queue.measurements.filter((m) => m.key === key);
		const walls = runs.map((m) => m.wallMs);
		const wallMs = median(walls);
		/** @type {Record<string, number> | undefined} */
		let perWorker;
		for (const m of runs) {
			if (!m.perWorker) continue;
			perWorker ??= {};
			for (const [name, count] of Object.entries(m.perWorker))
				perWorker[name] = (perWorker[name] ?? 0) + count;
		}
		return {
			key,
			label,
			submissions: runs[0]?.submissions,
			wallMs,
			range: [Math.min(...walls), Math.max(...walls)],
			emailsPerSecond: runs[0] ? runs[0].submissions / (wallMs / 1000) : 0,
			perWorker,
		};
	});
	const single = rows.find((r) => r.key === 'single');
	return rows.map((r) => ({
		...r,
		ratio: single ? r.emailsPerSecond / single.emailsPerSecond : undefined,
	}));
}

/** @param {ReturnType<typeof queueRows>} rows */
function formatQueueTable(rows) {
	const header = [
		'setup',
		'sign-ups',
		'wall time ms (min–max)',
		'emails/s',
		'vs one process',
		'executions per worker (all rounds)',
	];
	const body = rows.map((r) => [
		r.label,
		fmtInt(r.submissions),
		`${fmtInt(r.wallMs)} (${fmtInt(r.range[0])}–${fmtInt(r.range[1])})`,
		r.emailsPerSecond.toFixed(1),
		r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
		r.perWorker
			? Object.entries(r.perWorker)
					.sort()
					.map(([name, count]) => `${name}: ${fmtInt(count)}`)
					.join(', ')
			: '(the process itself)',
	]);
	const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i].length)));
	const numeric = (/** @type {number} */ i) => i >= 1 && i <= 4;
	const line = (/** @type {string[]} */ cells) =>
		`| ${cells.map((cell, i) => (numeric(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join(' | ')} |`;
	const separator = `|${widths.map((w, i) => (numeric(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
	return [line(header), separator, ...body.map(line)].join('\n');
}

// ------------------------------------------------------------------ main

/**
 * The memory table of one runner, and its growth per further item.
 * @param {string} title @param {ReturnType<typeof memoryFigures>} figures
 */
function printMemory(title, figures) {
	if (figures.points.length < 2) return;
	console.log(`\nMemory, ${title}, batch ${figures.batchSize} (fresh process per run, medians):`);
	console.log('|   items | RSS before run MB | peak RSS MB | growth MB | KB per item |');
	console.log('|--------:|------------------:|------------:|----------:|------------:|');
	for (const p of figures.points) {
		console.log(
			`| ${fmtInt(p.items).padStart(7)} | ${p.rssBeforeMb.toFixed(0).padStart(17)} | ${p.peakRssMb.toFixed(0).padStart(11)} | ${p.growthMb.toFixed(0).padStart(9)} | ${p.kbPerItem.toFixed(2).padStart(11)} |`,
		);
	}
	for (const step of figures.steps) {
		console.log(
			`${fmtInt(step.from)} → ${fmtInt(step.to)} items: ${step.kbPerItem.toFixed(2)} KB per further item`,
		);
	}
	if (figures.exponent !== undefined) {
		console.log(
			`(log-log slope of growth from ${fmtInt(figures.points[0].items)} to ${fmtInt(figures.points[figures.points.length - 1].items)} items: ${figures.exponent.toFixed(2)}; above 1 even for linear growth when part of it is a fixed offset)`,
		);
	}
}

/**
 * The `wan` part's table: each runner's median, and its ratio to the raw keep-alive client.
 * @param {typeof FULL['wan']} wan @param {Map<string, Summary>} s
 */
function printWan(wan, s) {
	console.log(
		`\nAdd Profiles behind a TLS proxy, ${wan.rttMs} ms round trip, batches of ${fmtInt(wan.batchSize)} (medians):`,
	);
	for (const items of wan.items) {
		const raw = s.get(`wan raw ${items} c1`);
		const runners = [
			...wan.concurrencies.map((c) => [`node, Concurrency ${c}`, s.get(`wan auto ${items} c${c}`)]),
			['raw keep-alive client, one at a time', raw],
		];
		for (const [label, m] of /** @type {Array<[string, Summary | undefined]>} */ (runners)) {
			if (!m) continue;
			const ratio = raw ? `${(m.wallMs / raw.wallMs).toFixed(2)}x raw` : '';
			const checks = m.checks.length ? `  CHECK FAILED: ${m.checks.join('; ')}` : '';
			console.log(
				`  ${fmtInt(items).padStart(7)} profiles  ${label.padEnd(38)} ${fmtInt(m.wallMs).padStart(7)} ms  ${ratio}  ${median(m.requests)} requests${checks}`,
			);
		}
	}
}

async function main() {
	const { values } = parseArgs({
		options: {
			runs: { type: 'string', default: '3' },
			quick: { type: 'boolean', default: false },
			only: { type: 'string', default: 'add,auto,send,memory,wan,queue,skip' },
			'http-items': { type: 'string' },
			'cpu-prof': { type: 'boolean', default: false },
			out: { type: 'string', default: path.join(BENCH, 'results.json') },
			'package-dir': { type: 'string', default: ROOT },
			candidate: { type: 'string' },
			help: { type: 'boolean', short: 'h', default: false },
		},
	});
	if (values.help) {
		console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(6, 16).join('\n'));
		return;
	}
	const config = structuredClone(values.quick ? QUICK : FULL);
	if (values['http-items']) config.httpItems = Number(values['http-items']);
	const runs = Math.max(1, Number(values.runs));
	const only = new Set(
		String(values.only)
			.split(',')
			.map((part) => part.trim()),
	);

	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-bench-'));
	const cpuProfDir = values['cpu-prof'] ? path.join(BENCH, 'profiles') : undefined;
	if (cpuProfDir) fs.mkdirSync(cpuProfDir, { recursive: true });
	/** @type {Awaited<ReturnType<typeof startSandboxProcess>> | undefined} */
	let sandbox;
	/** @type {Awaited<ReturnType<typeof startLatencyProxy>> | undefined} */
	let wanProxy;
	try {
		const packageDir = snapshotPackage(
			tmp,
			path.resolve(/** @type {string} */ (values['package-dir'])),
		);
		const candidateDir = values.candidate
			? snapshotPackage(
					fs.mkdtempSync(path.join(tmp, 'candidate-')),
					path.resolve(values.candidate),
				)
			: undefined;
		const nodesBase = await findNodesBase();
		const httpPackageDir = nodesBase.dir ? httpRequestPackage(tmp, nodesBase) : undefined;
		if ('reason' in nodesBase)
			log(`warning: ${nodesBase.reason}; the HTTP Request rows are skipped`);

		sandbox = await startSandboxProcess();
		wanProxy = only.has('wan')
			? await startLatencyProxy(sandbox.baseUrl, config.wan.rttMs)
			: undefined;
		const specs = plan(config, only, Boolean(httpPackageDir), Boolean(candidateDir));
		const startedAt = new Date();
		const loadStart = os.loadavg();
		log(
			`bench: ${specs.length} measurements x ${runs} rounds, interleaved; load average ${fmtLoad()}`,
		);
		if (loadStart[0] > 1) log('warning: load average above 1: other processes compete for the CPU');

		const measurements = [];
		for (let round = 1; round <= runs; round++) {
			for (const [index, spec] of specs.entries()) {
				const m = await measure(spec, {
					sandbox,
					packageDir,
					candidateDir,
					httpPackageDir,
					warmupItems: config.warmupItems,
					cpuProfDir,
					round,
					wanBaseUrl: wanProxy?.baseUrl,
				});
				measurements.push({ ...spec, ...m });
				log(
					`round ${round}/${runs} [${index + 1}/${specs.length}] ${spec.key}: ${fmtInt(m.wallMs)} ms, ` +
						`${m.requests} requests, peak RSS ${mb(m.peakRss).toFixed(0)} MB, load ${m.loadavg.toFixed(2)}` +
						(m.check ? `  CHECK FAILED: ${m.check}` : ''),
				);
			}
		}

		// The sign-up form through a real n8n, one process and queue mode, after the rest (its
		// n8n processes would otherwise compete with the measurements above).
		/** @type {any} */
		let queue;
		if (only.has('queue')) {
			const queueBench = await import(path.join(BENCH, 'queue.mjs'));
			const reason = queueBench.queueSkipReason();
			if (reason) {
				log(`warning: ${reason}; the queue-mode rows are skipped`);
				queue = { skipped: reason };
			} else {
				queue = await queueBench.measureQueue({ runs, ...config.queue, packageDir, log });
				queue.table = queueRows(queue);
			}
		}

		/** @type {any} */
		let skip;
		if (only.has('skip')) {
			const skipBench = await import(path.join(BENCH, 'skip.mjs'));
			const reason = skipBench.skipReason();
			if (reason) {
				log(`warning: ${reason}; the Skip Emails Already Sent rows are skipped`);
				skip = { skipped: reason };
			} else {
				skip = await skipBench.measureSkip({ runs, ...config.skip, packageDir, log });
				skip.text = skipBench.formatSkipTable(skip.table);
			}
		}

		const summaries = summarize(measurements);
		const rows = tableRows(config, only, summaries);
		const memory = {
			manual: memoryFigures(config.memory, 'node', summaries),
			auto: memoryFigures(config.autoMap, 'auto', summaries),
		};
		const goals = evaluateGoals(config, only, summaries, memory);
		for (const m of queue?.measurements ?? []) {
			if (m.check)
				goals.push({
					goal: `queue ${m.key} round ${m.round}: every sign-up sent one email, every execution succeeded`,
					status: 'MISS',
					detail: m.check,
				});
		}
		goals.push(...(skip?.goals ?? []));
		const loadEnd = os.loadavg();

		console.log(`\nnpm run bench — ${startedAt.toISOString()}, ${runs} rounds, medians`);
		console.log(
			`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ` +
				`load average at start ${loadStart.map((v) => v.toFixed(2)).join(', ')}, at end ${loadEnd.map((v) => v.toFixed(2)).join(', ')}`,
		);
		console.log(
			`HTTP Request node: ${nodesBase.dir ? `n8n-nodes-base ${nodesBase.version} (${nodesBase.source})` : 'not measured'}; ` +
				`rows marked *N ran on N items and are scaled per item`,
		);
		if (rows.length) {
			console.log('');
			console.log(formatTable(rows));
		}
		for (const [title, figures] of /** @type {const} */ ([
			['Add Profiles node', memory.manual],
			['Add Profiles node, Map Automatically', memory.auto],
		])) {
			printMemory(title, figures);
		}
		if (only.has('wan')) printWan(config.wan, summaries);
		if (queue?.table) {
			console.log(
				`\nSign-up form example through a real n8n (bench/queue.mjs): bursts of ${fmtInt(config.queue.submissions)} form ` +
					`submissions, ${config.queue.concurrency} at a time; wall time from the first submission until the sandbox ` +
					'has every email and list add (medians):',
			);
			console.log(formatQueueTable(queue.table));
		} else if (queue?.skipped) {
			console.log(`\nQueue mode: not measured (${queue.skipped})`);
		}
		if (skip?.text) {
			console.log(
				"\nSkip Emails Already Sent in a real n8n (bench/skip.mjs; SQLite, n8n's own store, History Size 20,000): " +
					'one execution of Send Email over N emails, medians, ratio to the option off:',
			);
			console.log(skip.text);
		} else if (skip?.skipped) {
			console.log(`\nSkip Emails Already Sent: not measured (${skip.skipped})`);
		}
		console.log('\nGoals:');
		for (const goal of goals)
			console.log(`  ${goal.status.padEnd(4)}  ${goal.goal}: ${goal.detail}`);

		const results = {
			startedAt: startedAt.toISOString(),
			finishedAt: new Date().toISOString(),
			machine: {
				node: process.version,
				cpus: os.cpus().length,
				cpuModel: os.cpus()[0]?.model,
				totalMemoryMb: Math.round(mb(os.totalmem())),
				loadavgStart: loadStart,
				loadavgEnd: loadEnd,
			},
			config: { ...config, runs, only: [...only], goals: GOALS },
			httpRequestNode:
				'reason' in nodesBase
					? { skipped: nodesBase.reason }
					: { version: nodesBase.version, source: nodesBase.source, dir: nodesBase.dir },
			table: rows,
			memory,
			queue,
			skip,
			goals,
			summaries: [...summaries.values()],
			measurements,
		};
		fs.writeFileSync(
			/** @type {string} */ (values.out),
			`${JSON.stringify(results, null, '\t')}\n`,
		);
		console.log(`\nWrote ${path.relative(process.cwd(), /** @type {string} */ (values.out))}`);
		if (cpuProfDir)
			console.log(
				`CPU profiles in ${path.relative(process.cwd(), cpuProfDir)} (summarize with node bench/profile-summary.js)`,
			);
	} finally {
		wanProxy?.close();
		await sandbox?.stop();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
}

main().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
