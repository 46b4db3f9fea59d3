/**
 * The queue-mode end-to-end test (`npm run test:queue`), outside `npm test` and `npm run
 * test:e2e`: it needs Debian's redis-server and postgresql (test/queue/prepare.mjs installs them
 * with apt-get when missing) and runs n8n as a main process and two workers. ES modules (they
 * import dev/*.mjs), so jest runs with --experimental-vm-modules and no transform.
 */
module.exports = {
	rootDir: '../..',
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/queue/**/*.e2e.mjs'],
	transform: {},
	testTimeout: 300_000,
	maxWorkers: 1,
	verbose: true,
};
