/**
 * Tests run the built package (dist/) inside n8n's engine, so they are plain JavaScript.
 *
 * One project per n8n engine (test/harness/engines.js): every engine test runs under
 * n8n 2.x and n8n 1.x. The sandbox and the verification tests do not touch the engine
 * and run once, in the 2.x project. `npx jest --selectProjects "n8n 1.x"` runs one engine.
 */
const { ENGINES, moduleNameMapper } = require('./test/harness/engines');

const ENGINE_INDEPENDENT = ['<rootDir>/test/sandbox/', '<rootDir>/test/verification/'];

/** @param {import('./test/harness/engines').Engine} engine */
function project(engine, { engineIndependentTests }) {
	return {
		displayName: engine.displayName,
		testEnvironment: '<rootDir>/test/harness/jest-environment.js',
		testEnvironmentOptions: { n8nEngine: engine.id },
		setupFilesAfterEnv: ['<rootDir>/test/harness/jest-setup.js'],
		testMatch: ['<rootDir>/test/**/*.test.js'],
		testPathIgnorePatterns: [
			'/node_modules/',
			...(engineIndependentTests ? [] : ENGINE_INDEPENDENT),
		],
		moduleNameMapper: moduleNameMapper(engine),
	};
}

module.exports = {
	testTimeout: 30000,
	// Jest's default is one worker fewer than the cores: one worker on this 2-core machine kind.
	// The engine tests wait on sockets and n8n, so both cores take a worker.
	maxWorkers: 2,
	reporters: ['default', '<rootDir>/test/harness/slowest-suites-reporter.js'],
	projects: [
		project(ENGINES.v2, { engineIndependentTests: true }),
		project(ENGINES.v1, { engineIndependentTests: false }),
	],
};
