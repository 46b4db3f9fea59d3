#!/usr/bin/env node
// Before jest in `npm run test:e2e` (`test:queue`: --queue), what is slow or needs the network:
// the build (unless E2E_NO_BUILD), Debian's chromium (--queue: redis-server and postgresql) with
// apt-get when missing, and n8n into the cache (dev/provision.mjs), the last two at once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n } from '../../dev/provision.mjs';
import { aptInstall, ensureQueuePackages } from '../../dev/queue-services.mjs';

const queue = process.argv.includes('--queue');
const say = (message) => console.log(`[${queue ? 'queue' : 'e2e'} prepare] ${message}`);
const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

try {
	if (!process.env.E2E_NO_BUILD) {
		say('building the package (npm run build)...');
		execFileSync('npm', ['run', 'build', '--silent'], {
			cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
			stdio: 'inherit',
		});
	}
	if (!queue && process.env.E2E_CHROMIUM && !fs.existsSync(CHROMIUM))
		throw new Error(`E2E_CHROMIUM=${CHROMIUM} does not exist`);
	const t0 = Date.now();
	const [, info] = await Promise.all([
		queue
			? ensureQueuePackages({ onProgress: say })
			: aptInstall(['chromium'], () => fs.existsSync(CHROMIUM), { onProgress: say }),
		provisionN8n({ onProgress: (m) => say(`n8n: ${m}`) }),
	]);
	say(
		`n8n ${info.n8nVersion} ${info.installed ? 'installed' : 'in the cache'} (${info.n8nDir}); ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`,
	);
} catch (error) {
	console.error(`[${queue ? 'queue' : 'e2e'} prepare] FAILED: ${error.message}`);
	process.exit(1);
}
