// @ts-check
// `npm run scan`: n8n's community package scanner (@n8n/scan-community-package), run here the
// way n8n runs it before verifying a package, without the registry download: on the unpacked
// `npm pack` tarball (what users install) and on the source files `n8n-node lint` covers.
// The scanner ignores eslint-disable comments, so the code has to pass outright.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
	analyzePackage,
	SOURCE_FILE_PATTERNS,
} from '@n8n/scan-community-package/scanner/scanner.mjs';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function unpackTarball() {
	const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'basicsengage-scan-'));
	const [{ filename }] = JSON.parse(
		execFileSync('npm', ['pack', '--json', '--pack-destination', workDir], {
			cwd: packageDir,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}),
	);
	const unpacked = path.join(workDir, 'package');
	fs.mkdirSync(unpacked);
	execFileSync('tar', [
		'-xzf',
		path.join(workDir, filename),
		'-C',
		unpacked,
		'--strip-components=1',
	]);
	return { workDir, unpacked };
}

async function main() {
	const { workDir, unpacked } = unpackTarball();
	try {
		/** @type {Array<[string, Awaited<ReturnType<typeof analyzePackage>>]>} */
		const scans = [
			['npm pack tarball', await analyzePackage(unpacked)],
			['source', await analyzePackage(packageDir, SOURCE_FILE_PATTERNS)],
		];
		let failed = false;
		for (const [label, result] of scans) {
			console.log(
				`${result.passed ? 'PASS' : 'FAIL'} scanner on the ${label}${result.message ? `: ${result.message}` : ''}`,
			);
			if (!result.passed) {
				failed = true;
				if (result.details) console.log(result.details);
			}
		}
		process.exitCode = failed ? 1 : 0;
	} finally {
		fs.rmSync(workDir, { recursive: true, force: true });
	}
}

await main();
