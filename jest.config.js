/** Tests run the built package (dist/) inside n8n's engine, so they are plain JavaScript. */
module.exports = {
	testEnvironment: 'node',
	testMatch: ['<rootDir>/test/**/*.test.js'],
	testTimeout: 30000,
};
