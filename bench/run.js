#!/usr/bin/env node
// @ts-check
'use strict';

/**
 * `npm run bench`: Add Profiles and Send Email inside n8n-core's WorkflowExecute, measured in the
 * same rounds against n8n's floors (a node reading the same parameters; one reading none; one
 * sending the same requests through n8n's HTTP helper) and a raw keep-alive client. See
 * bench/README.md.
 *
 *   node bench/run.js [--runs 3] [--quick | --full] [--only add,auto,send] [--cpu-prof]
 *                     [--candidate <dir>]   another build, run after each node measurement
 *
 * Parts: add, auto, send (the default); memory, wan, skip (on request).
 */

const { execSync, fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');

const ROOT = path.resolve(__dirname, '..');
const BENCH = __dirname;

// ------------------------------------------------------------------ configuration

/** The default run: every goal once. */
const DEFAULT = {
	add: { items: [20_000], batchSizes: [100, 1000] },
	/** Map Automatically: compared with the floors and manual mapping at the largest size. */
	auto: { items: [10_000, 50_000, 100_000], batchSize: 100 },
	send: { items: [2_000], concurrencies: [1, 5] },
	/** Map Each Field Manually's memory (part `memory`). */
	memory: { items: [10_000, 50_000, 100_000], batchSize: 100 },
	/** Behind a TLS proxy with a 40 ms round trip (part `wan`). */
	wan: { items: [20_000], batchSize: 1000, concurrencies: [1, 5], rttMs: 40 },
	/** Send Email with and without Skip Emails Already Sent (part `skip`). */
	skip: { items: [10_000], concurrency: 5 },
	warmupItems: 200,
};

/** `--full`: the sizes docs/performance.md's tables were measured at. */
const FULL = {
	...DEFAULT,
	add: { items: [20_000, 100_000], batchSizes: [100, 1000] },
	send: { items: [2_000, 5_000], concurrencies: [1, 5] },
	wan: { ...DEFAULT.wan, items: [20_000, 100_000] },
	skip: { items: [10_000, 20_000], concurrency: 5 },
};

/** `--quick`: the whole pipeline, at small sizes; its figures mean little. */
const QUICK = {
	add: { items: [2_000], batchSizes: [100, 1000] },
	auto: { items: [1_000, 2_000, 4_000], batchSize: 100 },
	send: { items: [300], concurrencies: [1, 5] },
	memory: { items: [1_000, 2_000, 4_000], batchSize: 100 },
	wan: { items: [2_000], batchSize: 1000, concurrencies: [1, 5], rttMs: 40 },
	skip: { items: [1_000], concurrency: 5 },
	warmupItems: 50,
};

const GOALS = {
	addProfilesRatio: 1.25,
	sendEmailRatio: 1.3,
	/** Send Email over the least any node sending through n8n's HTTP helper can cost. */
	sendEmailOverHelperRatio: 1.15,
	/** Map Automatically over the engine floor (a node reading no parameter) + raw client. */
	autoMapRatio: 1.5,
	/** Map Automatically over the items' fields posted as they are through n8n's helper. */
	autoMapOverHelperRatio: 1.15,
	/** How many times faster Map Automatically must be than Map Each Field Manually. */
	autoMapSpeedup: 10,
	/** Memory per further item, last step over first step: equal steps = linear growth. */
	memoryMarginalRatio: 1.2,
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
const fmt = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US');
const log = (/** @type {string} */ message) => process.stderr.write(`${message}\n`);

/**
 * Copies the built package (package.json + dist/) to a temporary directory, so a rebuild during
 * a long bench cannot change what is measured. node_modules is linked, so the package's
 * require('n8n-workflow') gets the engine's copy, as on an n8n server.
 * @param {string} tmp @param {string} source a directory with package.json and dist/
 */
function snapshotPackage(tmp, source) {
	if (!fs.existsSync(path.join(source, 'dist', 'nodes')))
		throw new Error(`${source}/dist/ is missing: run \`npm run build\` (npm run bench does) first`);
	const dir = fs.mkdtempSync(path.join(tmp, 'package-'));
	const { name, version, n8n } = JSON.parse(
		fs.readFileSync(path.join(source, 'package.json'), 'utf8'),
	);
	fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version, n8n }));
	fs.cpSync(path.join(source, 'dist'), path.join(dir, 'dist'), { recursive: true });
	fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
	return dir;
}

/**
 * The sandbox in its own process, so serving never competes with the measured process.
 * @returns {Promise<{ baseUrl: string, reset: () => Promise<any>, stop: () => Promise<void> }>}
 */
function startSandboxProcess() {
	return new Promise((resolve, reject) => {
		const child = fork(path.join(BENCH, 'sandbox-server.js'), [], {
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		/** @type {Array<(stats: any) => void>} */
		const waiting = [];
		child.on('message', (/** @type {any} */ message) => {
			if (!message.ready) return waiting.shift()?.(message.stats);
			resolve({
				baseUrl: message.baseUrl,
				reset: () =>
					new Promise((answer) => {
						waiting.push(answer);
						child.send({ cmd: 'reset' });
					}),
				stop: () =>
					new Promise((done) => {
						if (child.exitCode !== null) return done();
						child.once('exit', () => done());
						child.disconnect();
						setTimeout(() => child.kill('SIGKILL'), 5000).unref();
					}),
			});
		});
		child.once('error', reject);
		child.once('exit', (code) => reject(new Error(`sandbox process exited (${code})`)));
	});
}

// ------------------------------------------------------------------ the plan

/**
 * @typedef {object} Spec
 * @property {string} key  e.g. "add node 20000 b100", "send raw 2000 c5", "wan auto 20000 c5"
 * @property {'addProfiles' | 'sendEmail'} op
 * @property {import('./worker').WorkerSpec['runner']} runner
 * @property {number} items
 * @property {number} [batchSize]
 * @property {number} [concurrency]
 * @property {boolean} [wan]        through the latency proxy
 * @property {boolean} [candidate]  the --candidate build's
 */

/**
 * The key a measurement is found by in the plan, the tables and the goals.
 * @param {string} prefix @param {string} runner @param {number} items
 * @param {{ batchSize?: number, concurrency?: number }} [variant]
 */
const keyOf = (prefix, runner, items, { batchSize, concurrency } = {}) =>
	`${prefix} ${runner} ${items}${batchSize ? ` b${batchSize}` : ''}${concurrency ? ` c${concurrency}` : ''}`;

/**
 * One round's measurements, in run order.
 * @param {typeof DEFAULT} config @param {Set<string>} only
 * @returns {Spec[]}
 */
function plan(config, only) {
	/** @type {Spec[]} */
	const specs = [];
	/** @param {Omit<Spec, 'key'>} fields */
	const add = (fields) => {
		const prefix = fields.wan ? 'wan' : fields.op === 'addProfiles' ? 'add' : 'send';
		const key = keyOf(prefix, fields.runner, fields.items, fields);
		if (!specs.some((spec) => spec.key === key)) specs.push({ ...fields, key });
	};
	const op = /** @type {const} */ ('addProfiles');
	if (only.has('add')) {
		for (const items of config.add.items) {
			add({ op, runner: 'floor', items });
			for (const batchSize of config.add.batchSizes) {
				add({ op, runner: 'node', items, batchSize });
				add({ op, runner: 'raw', items, batchSize });
			}
		}
	}
	if (only.has('auto')) {
		const { items: sizes, batchSize } = config.auto;
		const items = sizes[sizes.length - 1];
		add({ op, runner: 'passthrough', items });
		add({ op, runner: 'raw', items, batchSize });
		add({ op, runner: 'helper', items, batchSize });
		add({ op, runner: 'node', items, batchSize });
		for (const size of sizes) add({ op, runner: 'auto', items: size, batchSize });
	}
	if (only.has('memory')) {
		const { items: sizes, batchSize } = config.memory;
		for (const items of sizes) add({ op, runner: 'node', items, batchSize });
	}
	if (only.has('wan')) {
		// Map Automatically, so the network and not n8n's expressions is what is measured.
		const { items: sizes, batchSize, concurrencies } = config.wan;
		for (const items of sizes) {
			for (const concurrency of concurrencies)
				add({ op, runner: 'auto', items, batchSize, concurrency, wan: true });
			add({ op, runner: 'raw', items, batchSize, wan: true });
		}
	}
	if (only.has('send')) {
		for (const items of config.send.items) {
			add({ op: 'sendEmail', runner: 'floor', items });
			for (const concurrency of config.send.concurrencies) {
				for (const runner of /** @type {const} */ (['node', 'raw', 'helper']))
					add({ op: 'sendEmail', runner, items, concurrency });
			}
		}
	}
	if (only.has('skip')) {
		const { items: sizes, concurrency } = config.skip;
		for (const items of sizes) {
			for (const runner of /** @type {const} */ (['node', 'skip']))
				add({ op: 'sendEmail', runner, items, concurrency });
		}
	}
	return specs;
}

// ------------------------------------------------------------------ one measurement

/**
 * Runs one measurement in a fresh worker process: it warms up, the sandbox is reset, it runs.
 * @param {Spec} spec
 * @param {{ sandbox: Awaited<ReturnType<typeof startSandboxProcess>>, packageDir: string,
 *   candidateDir?: string, n8nDir?: string, wanBaseUrl?: string, warmupItems: number, cpuProfDir?: string,
 *   round: number }} context
 */
function measure(spec, context) {
	const { sandbox } = context;
	const workerSpec = {
		...spec, // op, runner, items, batchSize, concurrency
		baseUrl: spec.wan ? context.wanBaseUrl : sandbox.baseUrl,
		packageDir: spec.candidate ? context.candidateDir : context.packageDir,
		floorDir: path.join(BENCH, 'floor'),
		n8nDir: context.n8nDir,
		warmupItems: context.warmupItems,
	};
	const profileName = `${spec.key.replace(/[^a-z0-9]+/gi, '-')}-round${context.round}.cpuprofile`;
	const execArgv = context.cpuProfDir
		? ['--cpu-prof', '--cpu-prof-dir', context.cpuProfDir, '--cpu-prof-name', profileName]
		: [];
	return new Promise((resolve, reject) => {
		const child = fork(path.join(BENCH, 'worker.js'), [JSON.stringify(workerSpec)], {
			cwd: ROOT,
			execArgv,
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		const timer = setTimeout(() => child.kill('SIGKILL'), WORKER_TIMEOUT_MS);
		/** @type {any} */
		let result;
		child.on('message', async (/** @type {any} */ message) => {
			if (message.type !== 'ready') return (result = message);
			await sandbox.reset(); // the warm-up's requests are not counted
			child.send({ type: 'go' });
		});
		// 'close', not 'exit': it comes after the IPC channel has handed over the last message.
		child.once('close', async (code) => {
			clearTimeout(timer);
			if (result?.type !== 'result')
				return reject(
					new Error(`${spec.key}: worker failed (exit ${code})\n${result?.message ?? ''}`),
				);
			const stats = await sandbox.reset();
			resolve({
				round: context.round,
				wallMs: result.wallMs,
				requests: stats.requests,
				failedAnswers: stats.failedAnswers,
				check: result.check ?? null,
				rssBefore: result.rssBefore,
				peakRss: result.peakRss,
				loadavg: os.loadavg()[0],
			});
		});
	});
}

// ------------------------------------------------------------------ figures

/**
 * @typedef {object} Summary
 * @property {string} key
 * @property {number} items
 * @property {number} wallMs   median
 * @property {number} minMs
 * @property {number} maxMs
 * @property {number[]} requests  per round
 * @property {number} peakRss  median, bytes
 * @property {number} rssBefore  median, bytes
 * @property {string[]} checks  failed output checks and non-2xx answers, if any
 */

/** @param {any[]} measurements @returns {Map<string, Summary>} */
function summarize(measurements) {
	/** @type {Map<string, Summary>} */
	const out = new Map();
	for (const key of new Set(measurements.map((m) => m.key))) {
		const runs = measurements.filter((m) => m.key === key);
		const walls = runs.map((m) => m.wallMs);
		out.set(key, {
			key,
			items: runs[0].items,
			wallMs: median(walls),
			minMs: Math.min(...walls),
			maxMs: Math.max(...walls),
			requests: runs.map((m) => m.requests),
			peakRss: median(runs.map((m) => m.peakRss)),
			rssBefore: median(runs.map((m) => m.rssBefore)),
			checks: runs.flatMap((m) => [
				...(m.check ? [`round ${m.round}: ${m.check}`] : []),
				...(m.failedAnswers ? [`round ${m.round}: ${m.failedAnswers} non-2xx answers`] : []),
			]),
		});
	}
	return out;
}

/**
 * Memory of one runner over its sizes, each in a fresh process: growth = peak RSS - RSS just
 * before the run. Linear growth means each further item costs the same between two sizes.
 * @param {string} prefix @param {string} runner @param {{ items: number[], batchSize: number }} sizes
 * @param {Map<string, Summary>} s
 */
function memoryFigures(prefix, runner, { items: sizes, batchSize }, s) {
	const points = sizes.flatMap((items) => {
		const m = s.get(keyOf(prefix, runner, items, { batchSize }));
		return m ? [{ items, peakRssMb: mb(m.peakRss), growthMb: mb(m.peakRss - m.rssBefore) }] : [];
	});
	const steps = points.slice(1).map((b, index) => {
		const a = points[index];
		return {
			from: a.items,
			to: b.items,
			kbPerItem: ((b.growthMb - a.growthMb) * 1024) / (b.items - a.items),
		};
	});
	// Reference: the first step, or, if noise made it tiny, the average per item where it ends.
	const marginalRatio = steps.length
		? steps[steps.length - 1].kbPerItem /
			Math.max(steps[0].kbPerItem, (points[1].growthMb * 1024) / points[1].items)
		: undefined;
	return { points, steps, marginalRatio };
}

/**
 * The table rows and the goals of every part that ran.
 * @param {typeof DEFAULT} config @param {Set<string>} only @param {Map<string, Summary>} s
 */
function evaluate(config, only, s) {
	/** @type {any[]} */
	const rows = [];
	/** @type {Array<{ goal: string, status: 'PASS' | 'MISS' | 'SKIP', detail: string }>} */
	const goals = [];
	/** @param {string} goal @param {boolean | undefined} pass @param {string} detail */
	const record = (goal, pass, detail) =>
		goals.push({ goal, status: pass === undefined ? 'SKIP' : pass ? 'PASS' : 'MISS', detail });
	/**
	 * A scenario's rows, each with its ratio to `reference` (ms), shown as its own row if labelled.
	 * @param {string} scenario @param {Array<[string, Summary | undefined]>} runners
	 * @param {number | undefined} reference @param {string} [referenceLabel]
	 */
	const table = (scenario, runners, reference, referenceLabel) => {
		/** @param {string} runner @param {Summary | undefined} m */
		const row = (runner, m) =>
			m && rows.push({ scenario, runner, m, ratio: reference ? m.wallMs / reference : undefined });
		for (const [runner, m] of runners) {
			row(runner, m);
			row(`${runner}, candidate build`, m && s.get(`${m.key} candidate`));
		}
		if (reference && referenceLabel)
			rows.push({ scenario, runner: referenceLabel, wallMs: reference, ratio: 1 });
	};
	/** @param {string} label @param {Summary | undefined} m @param {number | undefined} base @param {number} bound */
	const ratioGoal = (label, m, base, bound, what = 'node') => {
		if (!m || !base) return;
		const ratio = m.wallMs / base;
		record(
			`${label}: ${what} <= ${bound}x`,
			ratio <= bound,
			`${ratio.toFixed(2)}x (${fmt(m.wallMs)} ms against ${fmt(base)} ms)`,
		);
	};
	const sum = (/** @type {Array<Summary | undefined>} */ ...parts) =>
		parts.every(Boolean)
			? parts.reduce((total, m) => total + /** @type {Summary} */ (m).wallMs, 0)
			: undefined;

	if (only.has('add')) {
		for (const items of config.add.items) {
			const floor = s.get(keyOf('add', 'floor', items));
			for (const batchSize of config.add.batchSizes) {
				const node = s.get(keyOf('add', 'node', items, { batchSize }));
				const raw = s.get(keyOf('add', 'raw', items, { batchSize }));
				const scenario = `Add Profiles ${fmt(items)}, batch ${batchSize}`;
				const base = sum(floor, raw);
				table(
					scenario,
					[
						['node', node],
						['n8n floor', floor],
						['raw axios', raw],
					],
					base,
					'floor + raw',
				);
				ratioGoal(`${scenario} (floor + raw)`, node, base, GOALS.addProfilesRatio);
				if (!node) continue;
				const expected = Math.ceil(items / batchSize);
				record(
					`${scenario}: requests = ceil(N / batch size) = ${fmt(expected)}`,
					node.requests.every((n) => n === expected),
					`made ${node.requests.join(', ')} (one per round)`,
				);
			}
		}
	}
	if (only.has('auto')) {
		const { items: sizes, batchSize } = config.auto;
		const items = sizes[sizes.length - 1];
		const auto = s.get(keyOf('add', 'auto', items, { batchSize }));
		const manual = s.get(keyOf('add', 'node', items, { batchSize }));
		const engineFloor = s.get(keyOf('add', 'passthrough', items));
		const raw = s.get(keyOf('add', 'raw', items, { batchSize }));
		const helper = s.get(keyOf('add', 'helper', items, { batchSize }));
		const scenario = `Map Automatically ${fmt(items)}, batch ${batchSize}`;
		const base = sum(engineFloor, raw);
		table(
			scenario,
			[
				['node, Map Automatically', auto],
				['node, Map Each Field Manually', manual],
				['engine floor (reads no parameter)', engineFloor],
				['raw axios', raw],
				["items' fields posted through helpers.httpRequest", helper],
			],
			base,
			'engine floor + raw',
		);
		ratioGoal(`${scenario} (engine floor + raw)`, auto, base, GOALS.autoMapRatio);
		ratioGoal(
			`${scenario} (the same batches through helpers.httpRequest)`,
			auto,
			helper?.wallMs,
			GOALS.autoMapOverHelperRatio,
		);
		if (auto && manual) {
			const speedup = manual.wallMs / auto.wallMs;
			record(
				`${scenario}: >= ${GOALS.autoMapSpeedup}x faster than Map Each Field Manually`,
				speedup >= GOALS.autoMapSpeedup,
				`${speedup.toFixed(1)}x (manual ${fmt(manual.wallMs)} ms, auto ${fmt(auto.wallMs)} ms)`,
			);
		}
	}
	if (only.has('send')) {
		for (const items of config.send.items) {
			const floor = s.get(keyOf('send', 'floor', items));
			for (const concurrency of config.send.concurrencies) {
				const [node, raw, helper] = ['node', 'raw', 'helper'].map((runner) =>
					s.get(keyOf('send', runner, items, { concurrency })),
				);
				const scenario = `Send Email ${fmt(items)}, concurrency ${concurrency}`;
				const base = sum(floor, raw);
				table(
					scenario,
					[
						['node', node],
						['n8n floor', floor],
						['raw axios', raw],
						['n8n floor + helpers.httpRequest', helper],
					],
					base,
					'floor + raw',
				);
				ratioGoal(`${scenario} (floor + raw)`, node, base, GOALS.sendEmailRatio);
				// A community node may only send through n8n's helper, which opens a connection per
				// request: this is the node's own cost over that.
				ratioGoal(
					`${scenario} (floor + helpers.httpRequest)`,
					node,
					helper?.wallMs,
					GOALS.sendEmailOverHelperRatio,
				);
			}
		}
	}
	if (only.has('wan')) {
		for (const items of config.wan.items) {
			const raw = s.get(keyOf('wan', 'raw', items, { batchSize: config.wan.batchSize }));
			/** @type {Array<[string, Summary | undefined]>} */
			const runners = config.wan.concurrencies.map((concurrency) => [
				`node, Concurrency ${concurrency}`,
				s.get(keyOf('wan', 'auto', items, { batchSize: config.wan.batchSize, concurrency })),
			]);
			table(
				`Add Profiles ${fmt(items)} behind ${config.wan.rttMs} ms, batch ${config.wan.batchSize}`,
				[...runners, ['raw keep-alive client, one batch at a time', raw]],
				raw?.wallMs,
			);
		}
	}
	if (only.has('skip')) {
		const { items: sizes, concurrency } = config.skip;
		for (const items of sizes) {
			const [node, skip] = ['node', 'skip'].map((runner) =>
				s.get(keyOf('send', runner, items, { concurrency })),
			);
			table(
				`Send Email ${fmt(items)}, concurrency ${concurrency}: Skip Emails Already Sent`,
				[
					['node, option on (new emails, n8n store on SQLite)', skip],
					['node, option off', node],
				],
				node?.wallMs,
			);
		}
	}
	const memory = {
		manual: only.has('memory') ? memoryFigures('add', 'node', config.memory, s) : undefined,
		auto: only.has('auto') ? memoryFigures('add', 'auto', config.auto, s) : undefined,
	};
	for (const [name, figures] of Object.entries(memory)) {
		if (!figures) continue;
		const { marginalRatio, steps } = figures;
		record(
			`Memory, ${name === 'auto' ? 'Map Automatically' : 'Map Each Field Manually'}: peak RSS grows no faster than linearly (KB per further item, last step <= ${GOALS.memoryMarginalRatio}x first)`,
			marginalRatio === undefined ? undefined : marginalRatio <= GOALS.memoryMarginalRatio,
			marginalRatio === undefined
				? 'needs two sizes'
				: `${marginalRatio.toFixed(2)}x; ${steps.map((step) => `${fmt(step.from)}→${fmt(step.to)}: ${step.kbPerItem.toFixed(2)} KB/item`).join(', ')}`,
		);
	}
	// A fast run that failed would flatter the figures.
	for (const m of s.values()) {
		if (m.checks.length) record(`${m.key}: every run did all its work`, false, m.checks.join('; '));
	}
	return { rows, goals, memory };
}

/** @param {any[]} rows */
function formatTable(rows) {
	const header = [
		'scenario',
		'runner',
		'requests',
		'wall time ms (min–max)',
		'items/s',
		'peak RSS MB',
		'ratio',
	];
	const body = rows.map((r) => {
		const m = /** @type {Summary | undefined} */ (r.m);
		return [
			r.scenario,
			r.runner,
			m ? `${fmt(median(m.requests))}${new Set(m.requests).size > 1 ? ' (varies!)' : ''}` : '',
			m ? `${fmt(m.wallMs)} (${fmt(m.minMs)}–${fmt(m.maxMs)})` : fmt(r.wallMs),
			m ? fmt(m.items / (m.wallMs / 1000)) : '',
			m ? mb(m.peakRss).toFixed(0) : '',
			r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
		];
	});
	const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i].length)));
	const line = (/** @type {string[]} */ cells) =>
		`| ${cells.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join(' | ')} |`;
	const separator = `|${widths.map((w, i) => (i >= 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
	return [line(header), separator, ...body.map(line)].join('\n');
}

// ------------------------------------------------------------------ main

async function main() {
	const { values } = parseArgs({
		options: {
			runs: { type: 'string', default: '3' },
			quick: { type: 'boolean', default: false },
			full: { type: 'boolean', default: false },
			only: { type: 'string', default: 'add,auto,send' },
			'cpu-prof': { type: 'boolean', default: false },
			candidate: { type: 'string' },
		},
	});
	const config = values.quick ? QUICK : values.full ? FULL : DEFAULT;
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
	/** @type {{ baseUrl: string, close: () => void } | undefined} */
	let wanProxy;
	try {
		const packageDir = snapshotPackage(tmp, ROOT);
		const candidate = values.candidate && path.resolve(values.candidate);
		const candidateDir = candidate ? snapshotPackage(tmp, candidate) : undefined;
		// Skip's store is n8n's, from the n8n `npm run dev` runs (installed the first time).
		const provision = () => import(path.join(ROOT, 'dev', 'provision.mjs')); // dev/ is not typed
		const n8nDir = only.has('skip') ? (await (await provision()).provisionN8n()).n8nDir : undefined;
		sandbox = await startSandboxProcess();
		if (only.has('wan')) {
			const { startLatencyProxy } = require('./latency-proxy');
			wanProxy = await startLatencyProxy(sandbox.baseUrl, config.wan.rttMs);
		}
		// The candidate build right after each node measurement, in the same rounds.
		const specs = plan(config, only).flatMap((spec) =>
			candidate && ['node', 'auto'].includes(spec.runner)
				? [spec, { ...spec, key: `${spec.key} candidate`, candidate: true }]
				: [spec],
		);
		// What the figures belong to: the commit, marked when the working tree differs from it.
		const git = (/** @type {string} */ args, cwd = ROOT) =>
			execSync(`git ${args}`, { cwd }).toString().trim();
		const commitOf = (/** @type {string} */ dir) =>
			`${git('rev-parse --short HEAD', dir)}${git('status --porcelain --untracked-files=no -- nodes credentials bench', dir) ? ' + uncommitted changes' : ''}`;
		const commit = `${commitOf(ROOT)}${candidate ? `; candidate ${candidate} at ${commitOf(candidate)}` : ''}`;
		const startedAt = new Date();
		const loadStart = os.loadavg();
		log(
			`bench: ${specs.length} measurements x ${runs} rounds, interleaved; load average ${loadStart.map((v) => v.toFixed(2)).join(', ')}`,
		);
		if (loadStart[0] > 1) log('warning: load average above 1: other processes compete for the CPU');

		const measurements = [];
		for (let round = 1; round <= runs; round++) {
			for (const [index, spec] of specs.entries()) {
				const m = await measure(spec, {
					sandbox,
					packageDir,
					candidateDir,
					n8nDir,
					wanBaseUrl: wanProxy?.baseUrl,
					warmupItems: config.warmupItems,
					cpuProfDir,
					round,
				});
				measurements.push({ ...spec, ...m });
				log(
					`round ${round}/${runs} [${index + 1}/${specs.length}] ${spec.key}: ${fmt(m.wallMs)} ms, ${m.requests} requests, peak RSS ${mb(m.peakRss).toFixed(0)} MB, load ${m.loadavg.toFixed(2)}${m.check ? `  CHECK FAILED: ${m.check}` : ''}`,
				);
			}
		}
		const summaries = summarize(measurements);
		const { rows, goals, memory } = evaluate(config, only, summaries);
		const loadEnd = os.loadavg();
		const minutes = (Date.now() - startedAt.getTime()) / 60_000;

		console.log(
			`\nnpm run bench — ${startedAt.toISOString()}, commit ${commit}, ${runs} rounds, medians, ${minutes.toFixed(1)} minutes`,
		);
		console.log(
			`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average at start ${loadStart.map((v) => v.toFixed(2)).join(', ')}, at end ${loadEnd.map((v) => v.toFixed(2)).join(', ')}`,
		);
		if (rows.length) console.log(`\n${formatTable(rows)}`);
		for (const [name, figures] of Object.entries(memory)) {
			if (!figures?.points.length) continue;
			console.log(
				`\nMemory, ${name === 'auto' ? 'Map Automatically' : 'Map Each Field Manually'} (fresh process per run, medians): ${figures.points.map((p) => `${fmt(p.items)} items: peak ${p.peakRssMb.toFixed(0)} MB, growth ${p.growthMb.toFixed(0)} MB`).join('; ')}`,
			);
		}
		console.log('\nGoals:');
		for (const goal of goals)
			console.log(`  ${goal.status.padEnd(4)}  ${goal.goal}: ${goal.detail}`);

		if (cpuProfDir) console.log(`\nCPU profiles in ${path.relative(process.cwd(), cpuProfDir)}`);
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
