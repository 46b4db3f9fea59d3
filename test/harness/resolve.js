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

/** n8n-core, n8n-workflow or a dependency of the engine's n8n-core. @param {string} id */
const coreRequire = (id) => require(shared[id] ?? require.resolve(id, { paths: [coreDir] }));

/** A file inside the engine's n8n-core, for what its index does not export. @param {string} file */
const coreInternal = (file) => require(require.resolve(`${engine.corePackage}/${file}`));

module.exports = { coreRequire, coreInternal, engine };
