// @ts-check
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const packageDir = path.resolve(__dirname, '../..');
const packageJson = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));

/** What `npm publish` would ship, as npm itself lists it. */
function packedFiles() {
	const [report] = JSON.parse(
		execFileSync('npm', ['pack', '--dry-run', '--json'], {
			cwd: packageDir,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}),
	);
	return report.files.map((/** @type {{ path: string }} */ file) => file.path).sort();
}

const files = packedFiles();

test('npm pack ships only dist/ (js, codex json, output schemas, icons), README, LICENSE and package.json', () => {
	const unexpected = files.filter(
		(/** @type {string} */ file) =>
			!['package.json', 'README.md', 'LICENSE'].includes(file) &&
			!/^dist\/.+\.(js|d\.ts|node\.json|svg)$/.test(file) &&
			!/^dist\/nodes\/BasicsEngage\/__schema__\/v1\.0\.0\/\w+\/\w+\.json$/.test(file),
	);
	expect(unexpected).toEqual([]);
});

test('npm pack ships every file n8n loads: node, credential, codex, both icons', () => {
	const required = [
		...packageJson.n8n.nodes,
		...packageJson.n8n.credentials,
		'dist/nodes/BasicsEngage/BasicsEngage.node.json',
		'dist/nodes/BasicsEngage/basicsEngage.svg',
		'dist/nodes/BasicsEngage/basicsEngage.dark.svg',
		'README.md',
		'LICENSE',
		'package.json',
	];
	expect(files).toEqual(expect.arrayContaining(required));
});

test('npm pack ships every module the node requires', () => {
	const shippedJs = new Set(files.filter((/** @type {string} */ file) => file.endsWith('.js')));
	for (const file of shippedJs) {
		const source = fs.readFileSync(path.join(packageDir, file), 'utf8');
		for (const [, request] of source.matchAll(/require\("(\.[^"]+)"\)/g)) {
			const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), request));
			const candidates = [target, `${target}.js`, `${target}/index.js`];
			expect(candidates.some((candidate) => shippedJs.has(candidate))).toBe(true);
		}
	}
});

test('package.json: no runtime dependencies, no install scripts, no overrides, engines stated', () => {
	expect(packageJson.dependencies).toBeUndefined();
	expect(packageJson.overrides).toBeUndefined();
	for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
		expect(packageJson.scripts).not.toHaveProperty(hook);
	}
	expect(packageJson.engines).toEqual({ node: expect.stringMatching(/^>=\d+/) });
});
