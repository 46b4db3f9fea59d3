// The processes a test started, read from Linux's /proc. A process is known by its pid and start
// time together, so a pid the system has handed out again is never taken for one of ours.
import fs from 'node:fs';

/** Every process: pid -> { ppid, pgid, zombie, start } (start: clock ticks after boot). */
export function processTable() {
	const table = new Map();
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) continue;
		let stat;
		try {
			stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
		} catch {
			continue; // ended meanwhile
		}
		// "pid (comm) state ppid pgrp ... starttime ...": comm may hold spaces and parentheses
		const [state, ppid, pgid, ...rest] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		table.set(Number(name), {
			ppid: Number(ppid),
			pgid: Number(pgid),
			zombie: state === 'Z',
			start: rest[16], // field 22, starttime
		});
	}
	return table;
}

/** `root` and every process below it (root included even when it has ended). */
export function descendants(root, table = processTable()) {
	const found = new Set([root]);
	let grew = true;
	while (grew) {
		grew = false;
		for (const [pid, { ppid }] of table) {
			if (found.has(ppid) && !found.has(pid)) {
				found.add(pid);
				grew = true;
			}
		}
	}
	return [...found];
}

/** The processes below `root` and their start times; `known` (an earlier snapshot) is grown. */
export function snapshotTree(root, known = new Map(), table = processTable()) {
	if (!known.has(root) && table.has(root)) known.set(root, table.get(root).start);
	for (const top of [...known.keys()].filter((pid) => table.get(pid)?.start === known.get(pid))) {
		for (const pid of descendants(top, table)) {
			if (table.has(pid) && !known.has(pid)) known.set(pid, table.get(pid).start);
		}
	}
	return known;
}

/** The pids of a snapshot that still run: the same start time, and not a zombie (ended, unreaped). */
export function stillRunning(snapshot, table = processTable()) {
	return [...snapshot]
		.filter(([pid, start]) => table.get(pid)?.start === start && !table.get(pid).zombie)
		.map(([pid]) => pid);
}

/** Sends `signal` to each process of a snapshot that still runs; returns how many. */
export function signalTree(snapshot, signal, table = processTable()) {
	let sent = 0;
	for (const pid of stillRunning(snapshot, table)) {
		try {
			process.kill(pid, signal);
			sent++;
		} catch {
			// ended meanwhile
		}
	}
	return sent;
}
