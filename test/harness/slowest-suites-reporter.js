// @ts-check
'use strict';

/**
 * Prints the slowest test files at the end of a run, so a contributor sees where `npm test`
 * spends its time (one line each: seconds, engine project, file).
 */
class SlowestSuitesReporter {
	/** @param {any} _globalConfig @param {{ count?: number }} [options] */
	constructor(_globalConfig, options = {}) {
		this.count = options.count ?? 6;
	}

	/** @param {unknown} _contexts @param {import('@jest/test-result').AggregatedResult} results */
	onRunComplete(_contexts, results) {
		const suites = results.testResults
			.map((suite) => ({
				seconds: (suite.perfStats.end - suite.perfStats.start) / 1000,
				project: suite.displayName?.name ?? '',
				file: suite.testFilePath.replace(`${process.cwd()}/`, ''),
			}))
			.sort((a, b) => b.seconds - a.seconds)
			.slice(0, this.count);
		if (suites.length === 0) return;
		const lines = suites.map(
			({ seconds, project, file }) =>
				`  ${seconds.toFixed(1).padStart(6)} s  ${project.padEnd(9)} ${file}`,
		);
		process.stderr.write(`\nSlowest test files:\n${lines.join('\n')}\n`);
	}
}

module.exports = SlowestSuitesReporter;
