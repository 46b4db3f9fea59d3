// @ts-check
'use strict';

/**
 * jest's node environment plus the n8n engine of the project: every test file
 * of a project sees `process.env.N8N_ENGINE` = the project's
 * `testEnvironmentOptions.n8nEngine` (see jest.config.js and ./engines.js).
 * jest gives each test file its own copy of process.env, so the two projects
 * do not see each other's value even when they share a worker.
 */

const { TestEnvironment } = require('jest-environment-node');

class N8nEngineEnvironment extends TestEnvironment {
	/**
	 * @param {import('@jest/environment').JestEnvironmentConfig} config
	 * @param {import('@jest/environment').EnvironmentContext} context
	 */
	constructor(config, context) {
		super(config, context);
		const engine = config.projectConfig.testEnvironmentOptions.n8nEngine;
		if (typeof engine === 'string') this.global.process.env.N8N_ENGINE = engine;
	}
}

module.exports = N8nEngineEnvironment;
