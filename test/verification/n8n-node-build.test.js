// @ts-check
'use strict';

/**
 * `npm run build` against n8n's own `n8n-node build` on a copy of the sources: ours ships every
 * file it makes for the node and the credential, plus the codex (`*.node.json`, which it copies
 * only when tsconfig emits JSON), and none of the other images (it copies every png and svg).
 */

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPO_DIR = path.resolve(__dirname, '../..');

/** @param {string} root @returns {string[]} the files below root, relative, sorted */
function filesBelow(root) {
	return fs
		.readdirSync(root, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
		.sort();
}

test('ours = n8n-node build for nodes/ and credentials/, plus the codex, minus docs images', () => {
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-node-build-'));
	try {
		for (const entry of ['package.json', 'tsconfig.json', 'nodes', 'credentials', 'docs']) {
			fs.cpSync(path.join(REPO_DIR, entry), path.join(copy, entry), { recursive: true });
		}
		fs.symlinkSync(path.join(REPO_DIR, 'node_modules'), path.join(copy, 'node_modules'));
		execFileSync(path.join(REPO_DIR, 'node_modules/.bin/n8n-node'), ['build'], {
			cwd: copy,
			stdio: 'pipe',
			env: { ...process.env, CI: 'true' },
		});

		const theirs = filesBelow(path.join(copy, 'dist'));
		const ours = filesBelow(path.join(REPO_DIR, 'dist'));
		const forThePackage = (/** @type {string} */ file) => /^(nodes|credentials)\//.test(file);
		expect(ours.filter((file) => !file.endsWith('.node.json'))).toEqual(
			theirs.filter(forThePackage),
		);
		expect(ours.filter((file) => file.endsWith('.node.json'))).toEqual([
			'nodes/BasicsEngage/BasicsEngage.node.json',
		]);
		expect(theirs.filter((file) => !forThePackage(file))).toEqual(
			expect.arrayContaining([expect.stringMatching(/^docs\/images\/.+\.png$/)]),
		);
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
}, 120_000);
