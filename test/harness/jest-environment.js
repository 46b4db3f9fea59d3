// @ts-check
'use strict';

const { TestEnvironment } = require('jest-environment-node');

/** jest's node environment with N8N_ENGINE = the project's `testEnvironmentOptions.n8nEngine`. */
class N8nEngineEnvironment extends TestEnvironment {
	/**
	 * @param {import('@jest/environment').JestEnvironmentConfig} config
	 * @param {import('@jest/environment').EnvironmentContext} context
	 */
	constructor(config, context) {
		super(config, context);
		// Each test file has its own process.env: the two projects can share a worker.
		this.global.process.env.N8N_ENGINE = String(
			config.projectConfig.testEnvironmentOptions.n8nEngine,
		);
	}
}

module.exports = N8nEngineEnvironment;
