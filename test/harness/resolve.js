// @ts-check
'use strict';

/**
 * Requires modules as the selected engine's n8n-core sees them: npm nests newer @n8n/* copies
 * under n8n-core, and a DI token of the hoisted copy would configure nothing. Through the caller's
 * `require`, not createRequire, which under jest loads a second, un-sandboxed n8n-core.
 */

const path = require('node:path');
const { currentEngine, sharedModules } = require('./engines');

const engine = currentEngine();
const shared = sharedModules(engine);
const coreDir = path.dirname(shared['n8n-core']);

// Outside jest nothing maps the aliased engine's n8n-workflow: the node would get another copy.
if (require.resolve('n8n-workflow') !== shared['n8n-workflow']) {
	throw new Error(`N8N_ENGINE=${engine.id}: run through jest project "${engine.displayName}"`);
}

/** @type {Record<string, string>} */
const coreDependencies = require(`${engine.corePackage}/package.json`).dependencies;

/** n8n-core, n8n-workflow or a dependency of the engine's n8n-core. @param {string} id */
function coreRequire(id) {
	// Anything else would resolve to the hoisted copy, maybe the other engine's.
	if (!(id in shared || id in coreDependencies)) throw new Error(`n8n-core does not need ${id}`);
	return require(shared[id] ?? require.resolve(id, { paths: [coreDir] }));
}

/** A file inside the engine's n8n-core, for what its index does not export. @param {string} file */
const coreInternal = (file) => require(require.resolve(`${engine.corePackage}/${file}`));

module.exports = { coreRequire, coreInternal, engine };
