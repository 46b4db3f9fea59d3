#!/usr/bin/env node
// First step of `npm run test:queue`, before jest: what takes long or needs the network, with
// progress on the terminal.
//   - builds the package (dist/ is what gets installed into n8n) unless E2E_NO_BUILD is set,
//   - installs Debian's redis-server and postgresql with apt-get when missing (as root, or through
//     passwordless sudo); their system services are not used (dev/queue-services.mjs),
//   - provisions Node 24 and the pinned n8n into the cache (dev/provision.mjs; the first time
//     several minutes, then instant).

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n } from '../../dev/provision.mjs';
import { ensureQueuePackages } from '../../dev/queue-services.mjs';

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const say = (message) => console.log(`[queue prepare] ${message}`);
const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

function build() {
	return new Promise((resolve, reject) => {
		const child = spawn('npm', ['run', 'build', '--silent'], { cwd: REPO_DIR, stdio: 'inherit' });
		child.on('error', reject);
		child.on('close', (code) =>
			code === 0 ? resolve() : reject(new Error(`npm run build failed (exit ${code})`)),
		);
	});
}

async function main() {
	// E2E_NO_BUILD: dist/ is built already (.ci/run: by npm test, and suites run side by side)
	if (!process.env.E2E_NO_BUILD) {
		const t0 = Date.now();
		say('building the package (npm run build)...');
		await build();
		say(`built in ${seconds(t0)}`);
	}

	const t1 = Date.now();
	const [, info] = await Promise.all([
		ensureQueuePackages({ onProgress: say }),
		provisionN8n({ onProgress: (m) => say(`n8n: ${m}`) }),
	]);
	say(
		`n8n ${info.n8nVersion} ${info.installed ? 'installed' : 'already in the cache'} (${info.n8nDir}); ready in ${seconds(t1)}`,
	);
}

main().catch((error) => {
	console.error(`[queue prepare] FAILED: ${error.message}`);
	process.exit(1);
});
