// @ts-check
'use strict';

/**
 * Resolve modules the way the selected engine's n8n-core resolves them.
 *
 * The engine (n8n 2.x or 1.x) is decided in ./engines.js from N8N_ENGINE;
 * everything below only follows it.
 *
 * npm installs newer copies of several @n8n/* packages (di, backend-common,
 * backend-network, config, ...) under node_modules/n8n-core/node_modules,
 * next to older top-level copies. DI tokens are class objects, so services
 * must be registered with the copy n8n-core actually imports.
 *
 * This deliberately uses `require(require.resolve(id, { paths }))` rather than
 * `module.createRequire`: under jest, createRequire hands out Node's native
 * loader, which loads a second, un-sandboxed n8n-core (and crashes V8 with an
 * "invalid size error" while doing so). Going through the caller's `require`
 * keeps everything in jest's module registry, shared with the code under test.
 */

const path = require('node:path');
const { currentEngine, sharedModules } = require('./engines');

const engine = currentEngine();
const shared = sharedModules(engine);
const coreDir = path.dirname(shared['n8n-core']);

// The built package does a bare require('n8n-workflow'); it must get the
// engine's copy, as on a real n8n server. For the aliased 1.x engine that is
// the jest project's moduleNameMapper; fail loudly when it is missing.
const bareWorkflow = require.resolve('n8n-workflow');
if (bareWorkflow !== shared['n8n-workflow']) {
	throw new Error(
		`N8N_ENGINE=${engine.id}: a bare require('n8n-workflow') gives ${bareWorkflow}, ` +
			`not the engine's ${shared['n8n-workflow']}. Run through jest (project "${engine.displayName}"), ` +
			'whose moduleNameMapper maps it.',
	);
}

/** @type {Record<string, string>} */
const coreDependencies = require(`${engine.corePackage}/package.json`).dependencies ?? {};

/**
 * Whether the engine's n8n-core depends on a package (e.g. 2.x's
 * @n8n/backend-network, which 1.x does not have).
 * @param {string} id
 */
function coreHas(id) {
	return id in shared || id in coreDependencies;
}

/**
 * Require n8n-core, n8n-workflow or one of n8n-core's dependencies, as the
 * engine's n8n-core sees it. Anything else would resolve to whatever copy
 * happens to be at the top of node_modules (another engine's), so it throws.
 * @param {string} id
 * @returns {any}
 */
function coreRequire(id) {
	if (!coreHas(id)) {
		throw new Error(`${engine.corePackage} (engine ${engine.id}) does not depend on "${id}"`);
	}
	return require(shared[id] ?? require.resolve(id, { paths: [coreDir] }));
}

/**
 * Require a file inside the engine's n8n-core package (for services its index
 * does not export), e.g. `dist/execution-engine/ssh-clients-manager`.
 * @param {string} file path relative to the n8n-core package root
 * @returns {any}
 */
function coreInternal(file) {
	return require(require.resolve(`${engine.corePackage}/${file}`));
}

module.exports = { coreRequire, coreHas, coreInternal, coreDir, engine };
