/**
 * End-to-end tests against a real n8n server (`npm run test:e2e`), kept out of `npm test`:
 * the main jest.config.js only matches test/**\/*.test.js, these files are *.e2e.mjs.
 * They are ES modules (they import dev/*.mjs), so jest runs with --experimental-vm-modules
 * and no transform. test/e2e/prepare.mjs builds the package, installs Chromium and provisions
 * n8n before jest starts, so the timeouts below cover tests, not installs.
 * On n8n 1.x (N8N_DEV_RUNTIME=v1, `npm run test:e2e:v1`) only what differs between the lines:
 * the install from the tarball, and server.e2e.mjs without the retry (one workflow per operation,
 * Send and Wait, MCP); the editor, `npm run dev` and its --watch run on 2.x.
 */
const v1 = process.env.N8N_DEV_RUNTIME === 'v1';

module.exports = {
	rootDir: '../..',
	testEnvironment: 'node',
	testMatch: v1
		? ['<rootDir>/test/e2e/{install-tarball,server}.e2e.mjs']
		: ['<rootDir>/test/e2e/**/*.e2e.mjs'],
	transform: {},
	testTimeout: 120_000,
	maxWorkers: 1,
	verbose: true,
};
