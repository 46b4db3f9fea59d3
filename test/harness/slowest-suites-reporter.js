// @ts-check
'use strict';

/** Prints the six slowest test files after a run: where `npm test` spends its time. */
class SlowestSuitesReporter {
	/** @param {unknown} _contexts @param {import('@jest/test-result').AggregatedResult} results */
	onRunComplete(_contexts, results) {
		const lines = results.testResults
			.map((suite) => ({
				seconds: (suite.perfStats.end - suite.perfStats.start) / 1000,
				project: suite.displayName?.name ?? '',
				file: suite.testFilePath.replace(`${process.cwd()}/`, ''),
			}))
			.sort((a, b) => b.seconds - a.seconds)
			.slice(0, 6)
			.map(
				({ seconds, project, file }) =>
					`  ${seconds.toFixed(1).padStart(6)} s  ${project.padEnd(9)} ${file}`,
			);
		if (lines.length) process.stderr.write(`\nSlowest test files:\n${lines.join('\n')}\n`);
	}
}

module.exports = SlowestSuitesReporter;
