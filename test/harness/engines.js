// @ts-check
'use strict';

/**
 * The n8n engines the test suite runs against, and the one place that decides
 * which of them a test file gets.
 *
 * Each engine is a pair of n8n-core + n8n-workflow installed as devDependencies
 * (1.x under npm aliases). A community package does `require('n8n-workflow')`
 * and, on a real n8n server, gets the server's own copy: the CLI puts its own
 * `module.paths` on NODE_PATH before loading community packages
 * (LoadNodesAndCredentials.init). To reproduce that for an aliased engine, the
 * jest project of that engine maps the bare ids in `sharedModules` to the
 * engine's copies (moduleNameMapper); the mapping applies to every module in
 * the registry, so n8n-core's own `require('n8n-workflow')` gets the very same
 * copy as the node under test (needed for `instanceof` and for DI tokens).
 *
 * The engine of a test file is `process.env.N8N_ENGINE` (`v2` when unset),
 * set per jest project by test/harness/jest-environment.js.
 */

const path = require('node:path');

/**
 * @typedef {object} Engine
 * @property {'v1' | 'v2'} id
 * @property {1 | 2} major          n8n's major version
 * @property {string} displayName   the jest project name
 * @property {string} corePackage   the installed name of n8n-core (maybe an alias)
 * @property {string} workflowPackage the installed name of n8n-workflow (maybe an alias)
 * @property {boolean} aliased      installed under an alias: bare ids must be mapped
 */

/** @type {Record<'v1' | 'v2', Engine>} */
const ENGINES = {
	v2: {
		id: 'v2',
		major: 2,
		displayName: 'n8n 2.x',
		corePackage: 'n8n-core',
		workflowPackage: 'n8n-workflow',
		aliased: false,
	},
	v1: {
		id: 'v1',
		major: 1,
		displayName: 'n8n 1.x',
		corePackage: 'n8n-core-v1',
		workflowPackage: 'n8n-workflow-v1',
		aliased: true,
	},
};

const DEFAULT_ENGINE = 'v2';

/** @returns {Engine} the engine of this process / test file */
function currentEngine() {
	const id = process.env.N8N_ENGINE || DEFAULT_ENGINE;
	if (id !== 'v1' && id !== 'v2') {
		throw new Error(`N8N_ENGINE must be one of ${Object.keys(ENGINES).join(', ')}, got "${id}"`);
	}
	return ENGINES[id];
}

/**
 * Absolute entry points of the modules that must be ONE copy across the node
 * under test, n8n-core and n8n-workflow: n8n-core and n8n-workflow themselves,
 * and @n8n/errors, whose ApplicationError both n8n-core (its own error classes)
 * and n8n-workflow (re-exported, checked with instanceof) use. npm nests a
 * separate @n8n/errors under the n8n-workflow alias, so without this n8n-core's
 * errors would not be `instanceof ApplicationError` of n8n-workflow.
 *
 * @param {Engine} engine
 * @returns {Record<string, string>} bare module id -> absolute path
 */
function sharedModules(engine) {
	const core = require.resolve(engine.corePackage);
	const workflow = require.resolve(engine.workflowPackage);
	/** @type {Record<string, string>} */
	const modules = { 'n8n-core': core, 'n8n-workflow': workflow };
	const workflowDependencies = require(`${engine.workflowPackage}/package.json`).dependencies ?? {};
	if ('@n8n/errors' in workflowDependencies) {
		modules['@n8n/errors'] = require.resolve('@n8n/errors', { paths: [path.dirname(workflow)] });
	}
	return modules;
}

/**
 * jest `moduleNameMapper` for an engine: empty for the unaliased one (plain
 * node resolution already gives every module the same copies).
 * @param {Engine} engine
 * @returns {Record<string, string>}
 */
function moduleNameMapper(engine) {
	if (!engine.aliased) return {};
	return Object.fromEntries(
		Object.entries(sharedModules(engine)).map(([id, file]) => [
			`^${id.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`,
			file,
		]),
	);
}

module.exports = { ENGINES, DEFAULT_ENGINE, currentEngine, sharedModules, moduleNameMapper };
