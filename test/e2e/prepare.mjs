#!/usr/bin/env node
// First step of `npm run test:e2e`, before jest: everything the end-to-end tests need that takes
// long or needs the network, with progress on the terminal.
//   - builds the package (dist/ is what gets installed into n8n) unless E2E_NO_BUILD is set,
//   - installs Debian's `chromium` with apt-get when /usr/bin/chromium is missing (as root, or
//     through passwordless sudo); set E2E_CHROMIUM to use another Chromium binary,
//   - provisions Node 24 and the pinned n8n into the cache (dev/provision.mjs; the first time
//     several minutes, then instant).
// Chromium and n8n are prepared at the same time.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { provisionN8n } from '../../dev/provision.mjs';

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
const say = (message) => console.log(`[e2e prepare] ${message}`);
const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

function run(cmd, args, { env, prefix } = {}) {
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, {
			cwd: REPO_DIR,
			env: { ...process.env, ...env },
			stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
		});
		if (prefix) {
			const tail = [];
			const onData = (chunk) => {
				for (const line of chunk.toString().split('\n').filter(Boolean)) {
					tail.push(line);
					if (tail.length > 30) tail.shift();
				}
			};
			child.stdout.on('data', onData);
			child.stderr.on('data', onData);
			child.on('close', (code) =>
				code === 0
					? resolve()
					: reject(
							new Error(`${cmd} ${args.join(' ')} failed (exit ${code}):\n${tail.join('\n')}`),
						),
			);
		} else {
			child.on('close', (code) =>
				code === 0
					? resolve()
					: reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code})`)),
			);
		}
		child.on('error', reject);
	});
}

async function ensureChromium() {
	if (fs.existsSync(CHROMIUM)) return say(`Chromium: ${CHROMIUM}`);
	if (process.env.E2E_CHROMIUM) throw new Error(`E2E_CHROMIUM=${CHROMIUM} does not exist`);
	const t0 = Date.now();
	const asRoot = process.getuid?.() === 0;
	const sudo = asRoot ? [] : ['sudo', '-n'];
	say(
		`${CHROMIUM} is missing: installing Debian's chromium with apt-get${asRoot ? '' : ' (through sudo -n)'}...`,
	);
	const apt = async (...args) => {
		const [cmd, ...rest] = [...sudo, 'apt-get', ...args];
		await run(cmd, rest, { env: { DEBIAN_FRONTEND: 'noninteractive' }, prefix: 'apt' });
	};
	try {
		await apt('update', '-qq');
		await apt('install', '-y', '-qq', 'chromium');
	} catch (error) {
		throw new Error(
			`could not install chromium (${error.message.split('\n')[0]}). Install it yourself (sudo apt-get install chromium), ` +
				'or point E2E_CHROMIUM at a Chromium binary.',
		);
	}
	if (!fs.existsSync(CHROMIUM))
		throw new Error(`apt-get installed chromium, but ${CHROMIUM} is not there`);
	say(`Chromium installed in ${seconds(t0)}`);
}

async function main() {
	// E2E_NO_BUILD: dist/ is built already (.ci/run: by npm test, and suites run side by side)
	if (!process.env.E2E_NO_BUILD) {
		const t0 = Date.now();
		say('building the package (npm run build)...');
		await run('npm', ['run', 'build', '--silent']);
		say(`built in ${seconds(t0)}`);
	}

	const t1 = Date.now();
	const [, info] = await Promise.all([
		ensureChromium(),
		provisionN8n({ onProgress: (m) => say(`n8n: ${m}`) }),
	]);
	say(
		`n8n ${info.n8nVersion} ${info.installed ? 'installed' : 'already in the cache'} (${info.n8nDir}); ready in ${seconds(t1)}`,
	);
}

main().catch((error) => {
	console.error(`[e2e prepare] FAILED: ${error.message}`);
	process.exit(1);
});
