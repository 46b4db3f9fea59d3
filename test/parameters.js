// @ts-check
'use strict';

// Plain data, apart from test/support.js, so the end-to-end tests can build theirs without the engine.

/** @typedef {import('n8n-workflow').INodeParameters & { options?: import('n8n-workflow').INodeParameters }} NodeParameters  Options: a collection */

/**
 * An operation's parameters as `defaults`; a test overrides what it is about.
 * @param {import('n8n-workflow').INodeParameters} defaults
 */
const parameterBuilder =
	(defaults) =>
	/** @param {Record<string, any>} [overrides] @returns {NodeParameters} */
	(overrides = {}) => ({ ...defaults, ...overrides });

/** Send Email parameters with plain-text content. */
const sendParameters = parameterBuilder({
	resource: 'email',
	operation: 'send',
	to: '={{ $json.email }}',
	from: 'hello@example.com',
	subject: 'Welcome',
	content: 'text',
	text: 'Hello!',
});

/** Send and Wait for Response parameters: an Approve button. */
const sendAndWaitParameters = parameterBuilder({
	resource: 'email',
	operation: 'sendAndWait',
	to: '={{ $json.email }}',
	from: 'hello@example.com',
	subject: 'Refund for order 1042?',
	message: 'Refund 120 EUR to Jane?',
	responseType: 'approval',
});

/** Add Profiles parameters for a new list. */
const addProfilesParameters = parameterBuilder({
	resource: 'list',
	operation: 'addProfiles',
	listMode: 'new',
	listName: 'Newsletter',
});

/** Create List parameters. */
const createListParameters = parameterBuilder({
	resource: 'list',
	operation: 'create',
	listName: 'Spring segment',
	listDescription: 'Bought twice',
});

/** Create Campaign parameters with HTML content. */
const createCampaignParameters = parameterBuilder({
	resource: 'campaign',
	operation: 'create',
	campaignName: 'Spring sale',
	campaignSubject: '20% off',
	contentFormat: 'html',
	campaignHtml: '<p>Sale!</p>',
});

/** Send Campaign parameters, the ID from each item's `campaignId`. */
const sendCampaignParameters = parameterBuilder({
	resource: 'campaign',
	operation: 'send',
	campaignId: '={{ $json.campaignId }}',
});

module.exports = {
	addProfilesParameters,
	createCampaignParameters,
	createListParameters,
	sendAndWaitParameters,
	sendCampaignParameters,
	sendParameters,
};
