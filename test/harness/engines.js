// @ts-check
'use strict';

/**
 * The n8n engines the suite runs on: n8n-core + n8n-workflow, 1.x installed under npm aliases.
 * A test file's engine is `process.env.N8N_ENGINE` (`v2` when unset), set per jest project.
 */

const path = require('node:path');

/**
 * @typedef {{ id: 'v1' | 'v2', major: 1 | 2, displayName: string, corePackage: string,
 *   workflowPackage: string, aliased: boolean }} Engine
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

/** @returns {Engine} */
const currentEngine = () => ENGINES[process.env.N8N_ENGINE === 'v1' ? 'v1' : 'v2'];

/**
 * The modules the node, n8n-core and n8n-workflow must share as ONE copy (instanceof, DI tokens):
 * the two packages and the @n8n/errors npm nests under the n8n-workflow alias.
 * @param {Engine} engine @returns {Record<string, string>} bare id -> absolute path
 */
function sharedModules(engine) {
	const workflow = require.resolve(engine.workflowPackage);
	return {
		'n8n-core': require.resolve(engine.corePackage),
		'n8n-workflow': workflow,
		'@n8n/errors': require.resolve('@n8n/errors', { paths: [path.dirname(workflow)] }),
	};
}

/**
 * An aliased engine's jest moduleNameMapper: the node's bare require('n8n-workflow') gets the
 * engine's copy, as the n8n CLI hands its own to community packages (NODE_PATH).
 * @param {Engine} engine @returns {Record<string, string>}
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

module.exports = { ENGINES, currentEngine, sharedModules, moduleNameMapper };
