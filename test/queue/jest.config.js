/** `npm run test:queue`: n8n main and two workers, Redis, Postgres (prepare.mjs installs them). */
module.exports = {
	rootDir: '../..',
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/queue/**/*.e2e.mjs'],
	transform: {},
	testTimeout: 300_000,
	maxWorkers: 1,
	verbose: true,
};
