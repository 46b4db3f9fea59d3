// @ts-check
'use strict';

/**
 * What every runner of `npm run bench` sends: the input items, the node's parameters, the
 * floor's parameters and the raw client's request bodies. One place, so the runners of a
 * scenario carry the same data.
 */

const API_KEY = 'be_sandbox_demo_key';
const LIST_ID = 'lst_bench';
const FROM = 'hello@example.com';
const SUBJECT = 'Welcome';

const NODE_TYPE = 'n8n-nodes-basicsengage.basicsEngage';
const FLOOR_ADD_PROFILES_TYPE = 'n8n-nodes-bench-floor.benchFloorAddProfiles';
const FLOOR_SEND_EMAIL_TYPE = 'n8n-nodes-bench-floor.benchFloorSendEmail';
const FLOOR_ADD_PROFILES_HTTP_TYPE = 'n8n-nodes-bench-floor.benchFloorAddProfilesHttp';
const FLOOR_SEND_EMAIL_HTTP_TYPE = 'n8n-nodes-bench-floor.benchFloorSendEmailHttp';
const FLOOR_PASS_THROUGH_TYPE = 'n8n-nodes-bench-floor.benchFloorPassThrough';

/**
 * `count` contacts with distinct addresses (the shape test/support.js uses).
 * @param {number} count
 */
function contacts(count) {
	const items = new Array(count);
	for (let index = 0; index < count; index++) {
		items[index] = {
			email: `contact${index}@customer.test`,
			firstName: `First${index}`,
			lastName: `Last${index}`,
		};
	}
	return items;
}

// ------------------------------------------------------------------ Add Profiles

/** Per-item parameters of Add Profiles; the floor reads exactly these. */
const profileParameters = () => ({
	email: '={{ $json.email }}',
	additionalFields: { firstName: '={{ $json.firstName }}', lastName: '={{ $json.lastName }}' },
});

/**
 * One batch at a time unless `concurrency` says otherwise: the raw client's pattern, so the
 * `add`, `auto` and `memory` parts compare the same requests (the `wan` part sets it).
 * @param {number} batchSize @param {number} [concurrency]
 */
const addProfilesNodeParameters = (batchSize, concurrency = 1) => ({
	resource: 'list',
	operation: 'addProfiles',
	listMode: 'existing',
	listId: LIST_ID,
	...profileParameters(),
	options: { batchSize, concurrency },
});

/**
 * Add Profiles with Map Automatically: the same profiles, read from the items' own fields.
 * @param {number} batchSize @param {number} [concurrency]
 */
const addProfilesAutoParameters = (batchSize, concurrency = 1) => ({
	resource: 'list',
	operation: 'addProfiles',
	listMode: 'existing',
	listId: LIST_ID,
	mappingMode: 'autoMapInputData',
	options: { batchSize, concurrency },
});

/** The body the node sends for a batch of contacts (fields are already trimmed). */
const addProfilesBody = (/** @type {Array<Record<string, string>>} */ batch) => ({
	listId: LIST_ID,
	profiles: batch.map(({ email, firstName, lastName }) => ({ email, firstName, lastName })),
});

const ADD_PROFILES_HEADERS = {
	'Content-Type': 'application/json',
	Accept: 'application/json',
	Authorization: `Bearer ${API_KEY}`,
	Authroization: `Bearer ${API_KEY}`,
};

// ------------------------------------------------------------------ Send Email

/** Per-item parameters of Send Email with HTML content; the floor reads exactly these. */
const emailParameters = () => ({
	to: '={{ $json.email }}',
	from: FROM,
	subject: SUBJECT,
	content: 'html',
	html: '=<p>Hello {{ $json.firstName }}!</p>',
});

/**
 * With `skip`, Skip Emails Already Sent at its defaults (the whole email as key, per node,
 * History Size 10,000).
 * @param {number} concurrency @param {boolean} [skip]
 */
const sendEmailNodeParameters = (concurrency, skip = false) => ({
	resource: 'email',
	operation: 'send',
	...emailParameters(),
	options: { concurrency, ...(skip ? { skipAlreadySent: { settings: {} } } : {}) },
});

/** The body the node sends for one contact. */
const sendEmailBody = (/** @type {Record<string, string>} */ contact) => ({
	to: contact.email,
	from: FROM,
	subject: SUBJECT,
	html: `<p>Hello ${contact.firstName}!</p>`,
});

const SEND_EMAIL_HEADERS = {
	'Content-Type': 'application/json',
	Accept: 'application/json',
	Authorization: `Bearer ${API_KEY}`,
};

module.exports = {
	API_KEY,
	LIST_ID,
	NODE_TYPE,
	FLOOR_ADD_PROFILES_TYPE,
	FLOOR_SEND_EMAIL_TYPE,
	FLOOR_ADD_PROFILES_HTTP_TYPE,
	FLOOR_SEND_EMAIL_HTTP_TYPE,
	FLOOR_PASS_THROUGH_TYPE,
	contacts,
	profileParameters,
	addProfilesNodeParameters,
	addProfilesAutoParameters,
	addProfilesBody,
	ADD_PROFILES_HEADERS,
	emailParameters,
	sendEmailNodeParameters,
	sendEmailBody,
	SEND_EMAIL_HEADERS,
};
