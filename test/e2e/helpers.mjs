// Shared by the end-to-end tests: a temp n8n environment (sandbox + n8n + examples) and Chromium.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { startEnvironment } from '../../dev/dev.mjs';
import { REPO_DIR } from '../../dev/n8n-setup.mjs';

export { REPO_DIR };

/** Debian's chromium (test/e2e/prepare.mjs installs it); never a downloaded browser. */
export const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/**
 * Where the screenshots go: a temp folder, so a test run never changes tracked files.
 * `npm run screenshots` sets E2E_SCREENSHOT_DIR=docs/images to refresh the ones README shows.
 */
export const SCREENSHOT_DIR = path.resolve(
	process.env.E2E_SCREENSHOT_DIR ||
		path.join(os.tmpdir(), `basicsengage-e2e-screenshots-${process.env.N8N_DEV_RUNTIME || 'v2'}`),
);

export const log = (message) => process.stderr.write(`[e2e] ${message}\n`);

/**
 * Sandbox on a free port, n8n (5678 when free, else a free port) in a temp user folder,
 * the sandbox credential and the examples imported.
 */
export async function startTestEnvironment(options = {}) {
	const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-e2e-'));
	let env;
	try {
		env = await startEnvironment({
			sandboxPort: 0,
			userFolder: path.join(tmp, 'n8n'),
			importExamples: 'always',
			onProgress: log,
			...options,
		});
	} catch (error) {
		await fsp.rm(tmp, { recursive: true, force: true });
		throw error;
	}
	return {
		...env,
		tmp,
		n8nDir: env.info.n8nDir,
		async stop() {
			await env.stop();
			if (process.env.E2E_KEEP) log(`kept ${tmp} (n8n log: ${env.n8n.logFile})`);
			else await fsp.rm(tmp, { recursive: true, force: true });
		},
	};
}

/** Chromium with a fresh profile (user data dir), 1440x900. */
export async function launchBrowser() {
	if (!fs.existsSync(CHROMIUM)) {
		throw new Error(
			`${CHROMIUM} not found: run \`node test/e2e/prepare.mjs\` (installs Debian's chromium) or set E2E_CHROMIUM`,
		);
	}
	const userDataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'basicsengage-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1440, height: 900 },
		locale: 'en-US',
		timezoneId: 'UTC',
	});
	return {
		context,
		async close() {
			await context.close().catch(() => {});
			await fsp.rm(userDataDir, { recursive: true, force: true });
		},
	};
}

/**
 * `n8n execute --rawOutput` prints the run as JSON, possibly between log lines (a task runner's
 * shutdown line can come after it): the JSON is the text from a line starting with `{` to the
 * first line `}` that closes it.
 */
export function parseCliJson(stdout) {
	const start = stdout.search(/^\{/m);
	if (start < 0) throw new Error(`no JSON in n8n output:\n${stdout.slice(0, 2000)}`);
	const closing = /^\}[ \t]*$/gm;
	closing.lastIndex = start;
	for (let match; (match = closing.exec(stdout)); ) {
		try {
			return JSON.parse(stdout.slice(start, match.index + 1));
		} catch {
			// a nested object's closing brace at the start of a line: keep looking
		}
	}
	return JSON.parse(stdout.slice(start));
}

export const HERE = path.dirname(fileURLToPath(import.meta.url));
