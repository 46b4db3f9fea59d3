/**
 * Tests run the built package (dist/) inside n8n's engine, so they are plain JavaScript.
 *
 * One project per n8n engine (test/harness/engines.js). Every test runs under n8n 2.x. n8n 1.x
 * runs what differs between the two lines (engine-differences), the credential test, one run of
 * every operation (test/node/operations.test.js) and n8n running the node again (Retry On Fail,
 * which 1.x triggers on more outputs, and Retry of an execution); the rest takes the same paths
 * through both engines.
 * `npx jest --selectProjects "n8n 1.x"` runs one engine.
 */
const { ENGINES, moduleNameMapper } = require('./test/harness/engines');

/** @param {import('./test/harness/engines').Engine} engine @param {string[]} testMatch */
function project(engine, testMatch) {
	return {
		displayName: engine.displayName,
		testEnvironment: '<rootDir>/test/harness/jest-environment.js',
		testEnvironmentOptions: { n8nEngine: engine.id },
		setupFilesAfterEnv: ['<rootDir>/test/harness/jest-setup.js'],
		testMatch,
		testPathIgnorePatterns: ['/node_modules/'],
		moduleNameMapper: moduleNameMapper(engine),
	};
}

module.exports = {
	testTimeout: 30000,
	// Jest's default is one worker fewer than the cores: one worker on this 2-core machine kind.
	// The engine tests mostly wait (sockets, timeouts, settle delays): on 2 cores, 3 workers ran
	// jest in 68 to 81 s where 2 took 100 s.
	maxWorkers: 3,
	reporters: ['default', '<rootDir>/test/harness/slowest-suites-reporter.js'],
	projects: [
		project(ENGINES.v2, ['<rootDir>/test/**/*.test.js']),
		project(ENGINES.v1, [
			'<rootDir>/test/credential.test.js',
			'<rootDir>/test/harness/engine-differences.test.js',
			'<rootDir>/test/node/operations.test.js',
			'<rootDir>/test/reliability/retry-on-fail.test.js',
		]),
	],
};
