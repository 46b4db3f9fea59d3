// Where the n8n-nodes-base of the dev setup is: the n8n that dev/provision.mjs installs, in its
// cache folder ($N8N_DEV_CACHE_DIR, else ~/.cache/n8n-nodes-basicsengage).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { cacheRoot } from '../../dev/provision.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function nodesBase() {
	const manifest = path.join(REPO, 'dev/n8n-runtime/package.json');
	const n8nVersion = JSON.parse(fs.readFileSync(manifest, 'utf8')).dependencies.n8n;
	const dir = path.join(cacheRoot(), `n8n-${n8nVersion}`, 'node_modules', 'n8n-nodes-base');
	if (!fs.existsSync(path.join(dir, 'dist', 'nodes'))) {
		throw new Error(
			`n8n-nodes-base of n8n ${n8nVersion} is not installed in ${path.dirname(dir)}: ` +
				'run `node test/e2e/prepare.mjs` (or `node dev/provision.mjs`) first.',
		);
	}
	const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
	return { dir, version };
}
