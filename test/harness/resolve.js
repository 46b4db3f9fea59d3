// @ts-check
'use strict';

/**
 * Resolve modules the way n8n-core resolves them.
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

const coreDir = path.dirname(require.resolve('n8n-core'));

/**
 * @param {string} id
 * @returns {any}
 */
function coreRequire(id) {
	return require(require.resolve(id, { paths: [coreDir] }));
}

module.exports = { coreRequire, coreDir };
