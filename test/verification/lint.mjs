// `npm run lint`: n8n's own linter, `n8n-node lint` (in strict mode it first checks that
// eslint.config.mjs is n8n's default, then runs ESLint on the package), unchanged, with its output
// and exit code, plus one closing line like the other commands print:
//   lint: 0 problems in 84 files (n8n-node lint, strict)
// `n8n-node lint` prints nothing on success, so the file count comes from ESLint's own config
// (the files `eslint .` lints: matched by a config, not ignored), worked out while it runs.
// Arguments are passed on: `npm run lint -- --fix`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// ESLint's own default ignores; everything else is decided by the config
const ALWAYS_SKIPPED = new Set(['node_modules', '.git']);

/** How many files `eslint .` lints in the repository (ESLint's config decides, as in its run). */
async function countLintedFiles() {
	const { ESLint } = await import('eslint');
	const eslint = new ESLint({ cwd: REPO_DIR });
	const files = [];
	const walk = async (dir) => {
		let entries;
		try {
			entries = await fsp.readdir(dir, { withFileTypes: true });
		} catch {
			return; // unreadable (e.g. a Postgres cluster owned by another user)
		}
		for (const entry of entries) {
			if (ALWAYS_SKIPPED.has(entry.name)) continue;
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) await walk(full);
			else if (entry.isFile()) files.push(full);
		}
	};
	await walk(REPO_DIR);
	let count = 0;
	for (const file of files) {
		if ((await eslint.calculateConfigForFile(file)) !== undefined) count++;
	}
	return count;
}

const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

const strict = (() => {
	try {
		return JSON.parse(fs.readFileSync(path.join(REPO_DIR, 'package.json'), 'utf8')).n8n?.strict === true;
	} catch {
		return false;
	}
})();
const label = `n8n-node lint${strict ? ', strict' : ''}`;

const counting = countLintedFiles().catch(() => undefined);
let output = '';
const child = spawn(path.join(REPO_DIR, 'node_modules', '.bin', 'n8n-node'), ['lint', ...process.argv.slice(2)], {
	cwd: REPO_DIR,
	stdio: ['inherit', 'pipe', 'pipe'],
});
child.stdout.on('data', (chunk) => {
	output += chunk;
	process.stdout.write(chunk);
});
child.stderr.on('data', (chunk) => {
	output += chunk;
	process.stderr.write(chunk);
});
child.on('error', (error) => {
	console.log(`lint: failed to start n8n-node lint (${error.message}); run \`npm ci\` first`);
	process.exit(1);
});
child.on('close', async (code, signal) => {
	if (signal) {
		console.log(`lint: stopped (${signal})`);
		process.kill(process.pid, signal);
		return;
	}
	const fileCount = await counting;
	const inFiles = fileCount === undefined ? '' : ` in ${fileCount} files`;
	// ESLint's stylish summary: "✖ 3 problems (2 errors, 1 warning)"
	const summary = stripAnsi(output).match(/(\d+) problems? \((\d+) errors?, (\d+) warnings?\)/);
	if (code === 0) {
		const warnings = summary ? Number(summary[3]) : 0;
		console.log(
			warnings
				? `lint: ${warnings} warning${warnings === 1 ? '' : 's'}, 0 errors${inFiles} (${label})`
				: `lint: 0 problems${inFiles} (${label})`,
		);
	} else if (summary) {
		console.log(`lint: FAILED, ${summary[1]} problems (${summary[2]} errors, ${summary[3]} warnings)${inFiles} (${label})`);
	} else {
		console.log(`lint: FAILED (${label} exited with code ${code}; its output is above)`);
	}
	process.exitCode = code ?? 1;
});
