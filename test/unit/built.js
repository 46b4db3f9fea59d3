// @ts-check
'use strict';

/** The node's and the credential's pure functions as dist/ holds them, for the unit tables. */

const path = require('node:path');

/** @param {string} module a module of dist/nodes/BasicsEngage */
const built = (module) => require(path.resolve(__dirname, '../../dist/nodes/BasicsEngage', module));

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
