// @ts-check
'use strict';

/** The node's and the credential's pure functions as dist/ holds them, for the unit tables. */

const path = require('node:path');

/**
 * dist/ is compiled from nodes/ and credentials/, whose sources give the types.
 * @typedef {typeof import('../../nodes/BasicsEngage/transport/classify') &
 *   typeof import('../../nodes/BasicsEngage/transport/request') &
 *   typeof import('../../nodes/BasicsEngage/helpers/read') &
 *   typeof import('../../nodes/BasicsEngage/helpers/credentialChecks') &
 *   typeof import('../../nodes/BasicsEngage/helpers/options') &
 *   typeof import('../../nodes/BasicsEngage/actions/list/autoMap') &
 *   typeof import('../../nodes/BasicsEngage/actions/list/addProfiles.operation') &
 *   typeof import('../../nodes/BasicsEngage/actions/email/customForm') &
 *   Pick<typeof import('../../nodes/BasicsEngage/actions/email/send.operation'), 'queuedEmail'> &
 *   typeof import('../../credentials/BasicsEngageApi.credentials')} Built
 */

/** @param {string} module a module of dist/nodes/BasicsEngage */
const built = (module) => require(path.resolve(__dirname, '../../dist/nodes/BasicsEngage', module));

/** @type {Built} */
module.exports = {
	...built('transport/classify'),
	...built('transport/request'),
	...built('helpers/read'),
	...built('helpers/credentialChecks'),
	...built('helpers/options'),
	...built('actions/list/autoMap'),
	...built('actions/list/addProfiles.operation'),
	...built('actions/email/customForm'),
	queuedEmail: built('actions/email/send.operation').queuedEmail,
	...require(path.resolve(__dirname, '../../dist/credentials/BasicsEngageApi.credentials')),
};
