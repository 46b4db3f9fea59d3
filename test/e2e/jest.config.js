/**
 * `npm run test:e2e`: *.e2e.mjs, out of `npm test`; ES modules, so no transform. prepare.mjs has
 * installed everything before, so the timeouts cover tests. On n8n 1.x (`npm run test:e2e:v1`)
 * only what differs between the lines: the install from the tarball and server.e2e.mjs.
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
