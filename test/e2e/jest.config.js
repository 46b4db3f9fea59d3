/**
 * End-to-end tests against a real n8n server (`npm run test:e2e`), kept out of `npm test`:
 * the main jest.config.js only matches test/**\/*.test.js, these files are *.e2e.mjs.
 * They are ES modules (they import dev/*.mjs), so jest runs with --experimental-vm-modules
 * and no transform. test/e2e/prepare.mjs builds the package, installs Chromium and provisions
 * n8n before jest starts, so the timeouts below cover tests, not installs.
 */
module.exports = {
	rootDir: '../..',
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/e2e/**/*.e2e.mjs'],
	transform: {},
	testTimeout: 120_000,
	maxWorkers: 1,
	verbose: true,
};
