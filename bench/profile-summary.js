#!/usr/bin/env node
// @ts-check
'use strict';

/**
 * Summarizes a V8 .cpuprofile written by `node --cpu-prof` (`npm run bench -- --cpu-prof` writes
 * one per measurement of the node, the floors and the raw client into bench/profiles/).
 *
 *   node bench/profile-summary.js --key "send node 5000 c5" [--round 1] [--results bench/results.json]
 *   node bench/profile-summary.js <file.cpuprofile> [--window <startUs>,<endUs>]
 *   common options: [--top 25] [--match <regexp>]
 *
 * --key finds the profile and the measured window of that measurement in results.json. Only
 * the samples of the measured run count (not loading or warm-up): --window gives it by hand,
 * on the monotonic clock --cpu-prof uses (results.json: `windowUs`). --match lists only frames
 * whose function name or file matches (e.g. "dist/nodes" for the package's own code).
 * Prints self time per package, then self and total (inclusive) time per function, in ms and
 * % of the window.
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { values, positionals } = parseArgs({
	allowPositionals: true,
	options: {
		key: { type: 'string' },
		round: { type: 'string', default: '1' },
		results: { type: 'string', default: path.join(__dirname, 'results.json') },
		window: { type: 'string' },
		top: { type: 'string', default: '25' },
		match: { type: 'string' },
	},
});

let file = positionals[0];
let window = values.window;
if (values.key) {
	const results = JSON.parse(fs.readFileSync(values.results, 'utf8'));
	const measurement = results.measurements.find(
		(/** @type {any} */ m) => m.key === values.key && m.round === Number(values.round),
	);
	if (!measurement?.cpuProfile) {
		console.error(
			`No profiled measurement "${values.key}" round ${values.round} in ${values.results}`,
		);
		process.exit(2);
	}
	file = measurement.cpuProfile;
	window = measurement.windowUs.join(',');
}
if (!file) {
	console.error(
		'usage: node bench/profile-summary.js (--key <measurement> | <file.cpuprofile>) [--window a,b] [--top n] [--match re]',
	);
	process.exit(2);
}

/** @type {{ nodes: any[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }} */
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const [from, to] = window ? window.split(',').map(Number) : [-Infinity, Infinity];
const top = Number(values.top);
const match = values.match ? new RegExp(values.match) : undefined;

/** @type {Map<number, any>} */
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
/** @type {Map<number, number>} */
const parent = new Map();
for (const node of profile.nodes)
	for (const child of node.children ?? []) parent.set(child, node.id);

/** @param {any} node */
function frameKey(node) {
	const { functionName, url, lineNumber } = node.callFrame;
	const file = url ? url.replace(/^file:\/\//, '') : '';
	const short = file.includes('node_modules')
		? file.slice(file.lastIndexOf('node_modules') + 'node_modules/'.length)
		: file.includes('/dist/')
			? file.slice(file.indexOf('/dist/') + 1)
			: path.basename(file);
	return `${functionName || '(anonymous)'}  ${short}${file ? `:${lineNumber + 1}` : ''}`;
}

/** Where a frame's code lives: an npm package, this package's dist/, Node itself, or V8. */
function groupOf(/** @type {any} */ node) {
	const url = String(node.callFrame.url ?? '').replace(/^file:\/\//, '');
	if (!url)
		return node.callFrame.functionName.startsWith('(') ? node.callFrame.functionName : '(native)';
	if (url.startsWith('node:') || !url.startsWith('/')) return 'node: (Node.js internals)';
	const at = url.lastIndexOf('node_modules/');
	if (at !== -1) {
		const parts = url.slice(at + 'node_modules/'.length).split('/');
		return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
	}
	if (url.includes('/dist/')) return 'dist/ (the package under test)';
	if (url.includes('/test/harness/')) return 'test/harness';
	if (url.includes('/bench/')) return 'bench/';
	return path.basename(url);
}

/** @type {Map<string, number>} */
const byGroup = new Map();
/** @type {Map<string, number>} */
const self = new Map();
/** @type {Map<string, number>} */
const total = new Map();
let time = profile.startTime;
let windowMs = 0;
for (let index = 0; index < profile.samples.length; index++) {
	time += profile.timeDeltas[index];
	if (time < from || time > to) continue;
	// A sample's time is the gap to the next sample.
	const next = profile.timeDeltas[index + 1] ?? 0;
	const ms = next / 1000;
	windowMs += ms;
	let node = byId.get(profile.samples[index]);
	const leaf = frameKey(node);
	self.set(leaf, (self.get(leaf) ?? 0) + ms);
	const group = groupOf(node);
	byGroup.set(group, (byGroup.get(group) ?? 0) + ms);
	const seen = new Set();
	while (node) {
		const key = frameKey(node);
		if (!seen.has(key)) {
			seen.add(key);
			total.set(key, (total.get(key) ?? 0) + ms);
		}
		node = byId.get(parent.get(node.id) ?? -1);
	}
}

/** @param {string} title @param {Map<string, number>} table */
function print(title, table) {
	const rows = [...table.entries()]
		.filter(([key]) => !match || match.test(key))
		.sort((a, b) => b[1] - a[1])
		.slice(0, top);
	console.log(`\n${title}`);
	for (const [key, ms] of rows) {
		console.log(
			`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / windowMs).toFixed(1).padStart(5)}%  ${key}`,
		);
	}
}

console.log(
	`${file}: ${windowMs.toFixed(0)} ms of samples in the ${window ? 'measured run' : 'whole profile'}`,
);
print('Self time by where the code lives', byGroup);
print('Self time', self);
print('Total time (inclusive)', total);
