// `npm run dev -- --watch` as a developer uses it: saving a source file under nodes/ rebuilds the
// package, and the n8n that is already running serves the changed node (its hot reload; no
// restart). The node's description is changed in the TypeScript source; n8n's REST endpoint for
// node types (`POST /rest/node-types`, what the editor asks when it opens a node) and the editor's
// type list (`/types/nodes.json`) must then give the new text. How long that took is logged, not
// asserted.
//
// It runs from a temporary copy of the checkout (the files git tracks, as they are in the working
// tree, and a link to node_modules) and edits the copy: no file of the checkout changes, whatever
// happens to the test. The copy, n8n's data and every process started are removed afterwards,
// also when jest is interrupted (test/e2e/watchdog.mjs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { DEV_OWNER, restClient } from '../../dev/n8n-setup.mjs';
import { login } from '../../dev/start-n8n.mjs';
import { log, REPO_DIR, spawnDev, startWatchdog } from './helpers.mjs';

const NODE_FILE = 'nodes/BasicsEngage/BasicsEngage.node.ts';
const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_DIR, 'package.json'), 'utf8'));
const NODE_TYPE = `${PACKAGE.name}.basicsEngage`;

// stops npm run dev and removes tmp even if jest is interrupted (afterAll does not run then)
const watchdog = startWatchdog();
const tmp = watchdog.tempDir('basicsengage-watch-e2e-');
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
	return files.length;
}

/** The node's description as n8n's REST endpoint for node types gives it. */
async function servedDescription(rest) {
	const [type] = await rest.post('/rest/node-types', {
		nodeInfos: [{ name: NODE_TYPE, version: 1 }],
	});
	return type.description;
}

/** Calls `read` every 100 ms until it gives `wanted` (a throw counts as not yet) or time is up. */
async function poll(read, wanted, timeoutMs) {
	const t0 = Date.now();
	let last;
	for (;;) {
		try {
			last = await read();
		} catch (error) {
			last = error;
		}
		if (last === wanted || Date.now() - t0 > timeoutMs) return last;
		await new Promise((r) => setTimeout(r, 100));
	}
}

test('npm run dev -- --watch: a saved change to the node is rebuilt and served by the running n8n', async () => {
	const repo = path.join(tmp, 'repo');
	const t0 = Date.now();
	const copied = copyCheckout(REPO_DIR, repo);
	log(`copied ${copied} tracked files to ${repo} in ${Date.now() - t0} ms`);
	const checkoutSource = fs.readFileSync(path.join(REPO_DIR, NODE_FILE), 'utf8');

	// It builds the copy itself, as `npm run dev -- --watch` does; free ports
	const dev = spawnDev({ args: ['--watch'], cwd: repo, userFolder: path.join(tmp, 'n8n') });
	watchdog.stopTree(dev.child.pid);
	await dev.waitFor(/\[dev\] --watch: watching nodes\/ and credentials\//, 240_000);
	const editor = dev.output.match(/editor:\s+(http:\/\/localhost:\d+)/)[1];
	const version = dev.output.match(/n8n (\S+) editor:/)[1];
	log(`npm run dev -- --watch with n8n ${version}: ${dev.output.match(/\[dev\] ready in \S+/)[0]}`);
	const { cookie } = await login(editor, DEV_OWNER);
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
	expect(await poll(() => servedDescription(rest), after, 60_000)).toBe(after);
	const seconds = ((Date.now() - saved) / 1000).toFixed(1);

	// What the editor loads its node list from has it too. n8n rewrites that file after the reload
	// (in place: a read meanwhile can get half of it), so it is read until it parses and has it.
	const editorDescription = async () => {
		const res = await fetch(`${editor}/types/nodes.json`, { headers: { cookie } });
		const types = JSON.parse(await res.text());
		return types.find((t) => t.name === NODE_TYPE).description;
	};
	expect(await poll(editorDescription, after, 10_000)).toBe(after);

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

	expect(await dev.interrupt()).toEqual([]);
	// the checkout itself was never touched
	expect(fs.readFileSync(path.join(REPO_DIR, NODE_FILE), 'utf8')).toBe(checkoutSource);
}, 300_000);
