#!/usr/bin/env node
// Cleans up after an end-to-end test however jest ends: Ctrl-C or a kill ends jest without its
// afterAll, and a test file cannot catch the signal (jest hands it a copy of `process`). A test
// starts this script in a process group of its own (helpers.mjs, startWatchdog) and writes lines
// to its stdin: `pid <n>` (a process tree to stop) or `dir <path>` (a folder to remove). When
// stdin closes, it sends SIGTERM to each process group, SIGKILL to what is left after 30 s, and
// removes the folders; it looks at the trees every second, so later children count too.
import fs from 'node:fs';

import { processTable, signalTree, snapshotTree, stillRunning } from './processes.mjs';

const GRACE_MS = 30_000;
const roots = [];
const dirs = [];
let snapshot = new Map();
let cleaning = false;

function look() {
	const table = processTable();
	for (const root of roots) snapshot = snapshotTree(root, snapshot, table);
}

async function cleanUp() {
	if (cleaning) return;
	cleaning = true;
	clearInterval(timer);
	look();
	const running = new Set(stillRunning(snapshot));
	if (running.size > 0) {
		// SIGTERM to each root's group, as Ctrl-C: `npm run dev` stops what it started, in order
		const groups = roots.filter((root) => running.has(root));
		for (const root of groups) {
			try {
				process.kill(-root, 'SIGTERM');
			} catch {
				// ended meanwhile
			}
		}
		if (groups.length === 0) signalTree(snapshot, 'SIGTERM');
		const t0 = Date.now();
		while (Date.now() - t0 < GRACE_MS) {
			await new Promise((r) => setTimeout(r, 200));
			look();
			if (stillRunning(snapshot).length === 0) break;
		}
		if (signalTree(snapshot, 'SIGKILL') > 0) await new Promise((r) => setTimeout(r, 500));
	}
	for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
	process.exit(0);
}

const timer = setInterval(look, 1000);
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
	pending += chunk;
	const lines = pending.split('\n');
	pending = lines.pop();
	for (const line of lines) {
		const [kind, value] = [line.slice(0, 3), line.slice(4)];
		if (kind === 'pid') roots.push(Number(value));
		else if (kind === 'dir') dirs.push(value);
	}
	look();
});
process.stdin.on('end', cleanUp);
process.stdin.on('error', cleanUp);
