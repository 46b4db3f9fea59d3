// @ts-check
'use strict';

/**
 * The BasicsEngage operations as plain functions: (request, context) -> reply.
 * No I/O here, so the rules read top to bottom in the order the spec implies:
 * authentication, JSON parsing, field validation, business rules, quota.
 */

const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {
	MESSAGES,
	sendEmailBodySchema,
	addProfilesBodySchema,
	createListBodySchema,
	createCampaignBodySchemas,
	sendCampaignBodySchema,
} = require('./schemas');

/**
 * @typedef {import('./server').RecordedRequest} RecordedRequest
 * @typedef {import('./server').SandboxState} SandboxState
 * @typedef {import('./server').ResolvedOptions} ResolvedOptions
 * @typedef {{ options: ResolvedOptions, state: SandboxState }} RouteContext
 * @typedef {{ status: number, body: unknown, summary?: string }} Reply  summary: what the
 *   request changed that the answer does not show, for the log (ResponseLogEntry.summary)
 */

/** @param {string} text @returns {Reply} */
const badRequest = (text) => ({ status: 400, body: { status: 'error', error: text } });

/** @type {Reply} */
const INVALID_API_KEY = { status: 401, body: { status: 'error', message: MESSAGES.invalidApiKey } };

/** @type {Reply} */
const INVALID_JSON = badRequest(MESSAGES.invalidJson);

/** @param {string} text @returns {Reply} */
const notFound = (text) => ({ status: 404, body: { status: 'error', error: text } });

// ---------------------------------------------------------------- authentication

/**
 * The key of a `Bearer <key>` header value (scheme case-insensitive), else undefined.
 * @param {string | string[] | undefined} headerValue
 */
function bearerKey(headerValue) {
	if (typeof headerValue !== 'string') return undefined;
	const match = /^Bearer\s+(\S+)\s*$/i.exec(headerValue.trim());
	return match ? match[1] : undefined;
}

/**
 * The first accepted API key found in the given headers, else undefined.
 * @param {RecordedRequest} request
 * @param {string[]} headerNames lower-cased header names to look in
 * @param {string[]} apiKeys
 */
function authenticate(request, headerNames, apiKeys) {
	for (const name of headerNames) {
		const key = bearerKey(request.headers[name]);
		if (key !== undefined && apiKeys.includes(key)) return key;
	}
	return undefined;
}

/** Header names the list operation reads, per the `listAuthHeader` option. */
const LIST_AUTH_HEADER_NAMES = {
	Authroization: ['authroization'],
	Authorization: ['authorization'],
	either: ['authroization', 'authorization'],
};

// ---------------------------------------------------------------- shared helpers

/**
 * Parses the body with a schema; the reply is the 400 for the first issue.
 * @template T
 * @param {import('zod').ZodType<T, any, any>} schema
 * @param {unknown} body
 * @returns {{ data: T, reply?: undefined } | { data?: undefined, reply: Reply }}
 */
function validate(schema, body) {
	const result = schema.safeParse(body);
	if (result.success) return { data: result.data };
	return { reply: badRequest(result.error.issues[0].message) };
}

/** Most items a log summary names before it says how many more there are. */
const SUMMARY_ITEMS = 10;

/**
 * 'a, b, c' or 'a, b, c (+7 more)'.
 * @param {string[]} items
 */
function someOf(items) {
	const shown = items.slice(0, SUMMARY_ITEMS).join(', ');
	const more = items.length - SUMMARY_ITEMS;
	return more > 0 ? `${shown} (+${more} more)` : shown;
}

/** @param {import('./server').StoredProfile[]} profiles 'prof_… ann@x.test, prof_… bob@x.test' */
const describeProfiles = (profiles) =>
	someOf(profiles.map(({ profileId, email }) => `${profileId} ${email}`));

/** @param {Date} date 'YYYY-MM-DD' in UTC */
const utcDay = (date) => date.toISOString().slice(0, 10);

/**
 * The quota counter of a key for the current UTC day, starting a new day at 0.
 * @param {RouteContext} context
 * @param {string} apiKey
 */
function quotaCounter({ options, state }, apiKey) {
	const today = utcDay(options.now());
	let counter = state.quota.get(apiKey);
	if (!counter || counter.day !== today) {
		counter = { day: today, count: 0 };
		state.quota.set(apiKey, counter);
	}
	return counter;
}

// ---------------------------------------------------------------- POST /email/send

/**
 * Rules that depend on the sandbox configuration rather than on the body alone.
 * @param {import('zod').infer<typeof sendEmailBodySchema>} email
 * @param {ResolvedOptions} options
 * @returns {Reply | undefined}
 */
function checkSenderAndTemplate(email, options) {
	const { verifiedSenders, templates } = options;
	const from = email.from.toLowerCase();
	if (verifiedSenders && !verifiedSenders.some((sender) => sender.toLowerCase() === from)) {
		return badRequest(MESSAGES.senderNotVerified(email.from));
	}
	if (email.templateId === undefined) return undefined;

	const templateVariables = Object.hasOwn(templates, email.templateId)
		? templates[email.templateId]
		: undefined;
	if (!templateVariables) return badRequest(MESSAGES.templateNotFound(email.templateId));
	const unknownKey = Object.keys(email.templateVariables ?? {}).find(
		(key) => !templateVariables.includes(key),
	);
	if (unknownKey !== undefined)
		return badRequest(MESSAGES.unknownTemplateVariable(unknownKey, email.templateId));
	return undefined;
}

/**
 * What an accepted email's content was, for the log: 'template tmpl_welcome', 'HTML' (with its
 * links) or 'plain text'.
 * @param {import('zod').infer<typeof sendEmailBodySchema>} email
 */
const describeContent = (email) =>
	email.templateId !== undefined
		? `template ${email.templateId}`
		: email.html !== undefined
			? ['HTML', ...linksOf(email.html)].join(', link: ')
			: 'plain text';

/**
 * The links of an HTML email, so that those of a Send and Wait for Response email (its answers)
 * can be opened from the log.
 * @param {string} html
 */
const linksOf = (html) =>
	[...html.matchAll(/href="([^"]*)"/g)].map(([, href]) => href.replaceAll('&amp;', '&'));

/**
 * @param {RecordedRequest} request
 * @param {RouteContext} context
 * @returns {Reply}
 */
function sendEmail(request, context) {
	const { options, state } = context;
	const apiKey = authenticate(request, ['authorization'], options.apiKeys);
	if (apiKey === undefined) return INVALID_API_KEY;
	if (request.body === undefined) return INVALID_JSON;

	const { data: email, reply } = validate(sendEmailBodySchema, request.body);
	if (reply) return reply;
	const rejection = checkSenderAndTemplate(email, options);
	if (rejection) return rejection;

	// Only accepted emails count against the quota, so the check comes last.
	const counter = quotaCounter(context, apiKey);
	if (counter.count >= options.dailyLimit) {
		return { status: 429, body: { status: 'error', error: MESSAGES.quotaExceeded } };
	}
	counter.count += 1;

	const messageId = `msg_${randomUUID()}`;
	state.emails.push({ messageId, apiKey, ...email, queuedAt: options.now().toISOString() });
	return {
		status: 200,
		body: {
			status: 'success',
			message: MESSAGES.emailQueued,
			data: { messageId, dailyEmailCount: counter.count, dailyEmailLimit: options.dailyLimit },
		},
		summary: `email ${messageId} to ${email.to}, ${describeContent(email)}`,
	};
}

// ---------------------------------------------------------------- POST /list/addProfiles

/** @param {number} length @returns {string} random lower-case hex digits */
const randomHex = (length) => randomUUID().replace(/-/g, '').slice(0, length);

/** @returns {string} */
const newListId = () => `list_${randomHex(16)}`;

/** @returns {string} */
const newProfileId = () => `prof_${randomHex(16)}`;

/**
 * The profileId of an email in the whole account; an email seen for the first time gets a new
 * profile (with the fields given this time) and is added to `created`.
 * @param {SandboxState} state
 * @param {{ email: string, firstName?: string, lastName?: string }} profile
 * @param {import('./server').StoredProfile[]} created
 */
function profileIdFor(state, profile, created) {
	const key = profile.email.toLowerCase();
	const known = state.profileIdsByEmail.get(key);
	if (known !== undefined) return known;
	const stored = { profileId: newProfileId(), ...profile };
	state.profiles.set(stored.profileId, stored);
	state.profileIdsByEmail.set(key, stored.profileId);
	created.push(stored);
	return stored.profileId;
}

/**
 * Adds profiles not yet in the list (emails compared case-insensitively). The list keeps the
 * fields given here; the profile's ID is the one its email has in the account.
 * @param {SandboxState} state
 * @param {import('./server').StoredList} list
 * @param {import('zod').infer<typeof addProfilesBodySchema>['profiles']} profiles
 * @returns {{ addedCount: number, created: import('./server').StoredProfile[] }} how many were
 *   added to the list, and the profiles new to the account
 */
function addNewProfiles(state, list, profiles) {
	let addedCount = 0;
	/** @type {import('./server').StoredProfile[]} */
	const created = [];
	for (const profile of profiles) {
		const key = profile.email.toLowerCase();
		if (list.profiles.has(key)) continue;
		list.profiles.set(key, { profileId: profileIdFor(state, profile, created), ...profile });
		addedCount += 1;
	}
	return { addedCount, created };
}

/**
 * @param {RecordedRequest} request
 * @param {RouteContext} context
 * @returns {Reply}
 */
function addProfiles(request, { options, state }) {
	const headerNames = LIST_AUTH_HEADER_NAMES[options.listAuthHeader];
	if (authenticate(request, headerNames, options.apiKeys) === undefined) return INVALID_API_KEY;
	if (request.body === undefined) return INVALID_JSON;

	// Every profile is validated before any is stored: a bad request changes nothing.
	const { data: body, reply } = validate(addProfilesBodySchema, request.body);
	if (reply) return reply;

	let list;
	if (body.listId !== undefined) {
		list = state.lists.get(body.listId);
		if (!list) return notFound(MESSAGES.listNotFound);
	} else {
		list = {
			listId: newListId(),
			name: body.name ?? '',
			description: body.description,
			profiles: new Map(),
		};
		state.lists.set(list.listId, list);
	}

	const { addedCount, created } = addNewProfiles(state, list, body.profiles);
	return {
		status: 200,
		body: { status: 'success', data: { listId: list.listId, addedCount } },
		summary: created.length > 0 ? `new profiles: ${describeProfiles(created)}` : undefined,
	};
}

// ---------------------------------------------------------------- POST /list/create

/**
 * @param {RecordedRequest} request
 * @param {RouteContext} context
 * @returns {Reply}
 */
function createList(request, { options, state }) {
	// Spelled correctly on this endpoint's pages; listAuthHeader is about Add Profiles only.
	if (authenticate(request, ['authorization'], options.apiKeys) === undefined) {
		return INVALID_API_KEY;
	}
	if (request.body === undefined) return INVALID_JSON;

	const { data: body, reply } = validate(createListBodySchema, request.body);
	if (reply) return reply;

	// Every ID is looked up before the list is created: an unknown one changes nothing.
	const profiles = [];
	for (const profileId of new Set(body.profiles ?? [])) {
		const profile = state.profiles.get(profileId);
		if (!profile) return notFound(MESSAGES.profileNotFound(profileId));
		profiles.push(profile);
	}

	/** @type {import('./server').StoredList} */
	const list = {
		listId: newListId(),
		name: body.listName,
		description: body.listDescription,
		profiles: new Map(profiles.map((profile) => [profile.email.toLowerCase(), { ...profile }])),
	};
	state.lists.set(list.listId, list);
	return { status: 200, body: { status: 'success', data: { listId: list.listId } } };
}

// ---------------------------------------------------------------- POST /campaign/create

/** A MongoDB-ObjectId-like campaign _id: 24 lower-case hex characters, as in the examples. */
const newCampaignId = () => randomBytes(12).toString('hex');

/**
 * @param {RecordedRequest} request
 * @param {RouteContext} context
 * @returns {Reply}
 */
function createCampaign(request, { options, state }) {
	if (authenticate(request, ['authorization'], options.apiKeys) === undefined) {
		return INVALID_API_KEY;
	}
	if (request.body === undefined) return INVALID_JSON;

	const schema = createCampaignBodySchemas[options.campaignListField];
	const { data: input, reply } = validate(schema, request.body);
	if (reply) return reply;

	const { listIds, ...fields } = input;
	const unknownListId = listIds.find((listId) => !state.lists.has(listId));
	if (unknownListId !== undefined) return notFound(MESSAGES.listIdNotFound(unknownListId));

	/** @type {import('./server').StoredCampaign} */
	const campaign = {
		_id: newCampaignId(),
		...fields,
		recepientList: listIds,
		createdAt: options.now().toISOString(),
	};
	state.campaigns.set(campaign._id, campaign);
	return { status: 200, body: { status: 'success', data: { campaign } } };
}

// ---------------------------------------------------------------- POST /campaign/send

/**
 * The emails of every profile in the campaign's lists as they are now: lists in the campaign's
 * order, profiles in list order, each email (case-insensitive) once.
 * @param {SandboxState} state
 * @param {import('./server').StoredCampaign} campaign
 * @returns {string[]}
 */
function campaignRecipients(state, campaign) {
	/** @type {Map<string, string>} */
	const recipients = new Map();
	for (const listId of campaign.recepientList) {
		for (const [key, profile] of state.lists.get(listId)?.profiles ?? []) {
			if (!recipients.has(key)) recipients.set(key, profile.email);
		}
	}
	return [...recipients.values()];
}

/**
 * Sending "in the background" is over when the answer leaves: the send is recorded at once.
 * @param {RecordedRequest} request
 * @param {RouteContext} context
 * @returns {Reply}
 */
function sendCampaign(request, { options, state }) {
	if (authenticate(request, ['authorization'], options.apiKeys) === undefined) {
		return INVALID_API_KEY;
	}
	if (request.body === undefined) return INVALID_JSON;

	const { data: body, reply } = validate(sendCampaignBodySchema, request.body);
	if (reply) return reply;
	const campaign = state.campaigns.get(body.campaignId);
	if (!campaign) return notFound(MESSAGES.campaignNotFound);
	const recipients = campaignRecipients(state, campaign);
	if (recipients.length === 0) return badRequest(MESSAGES.campaignWithoutRecipients);

	// Campaign emails are not transactional emails: no quota, not in state.emails.
	const sentTo = `${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`;
	state.campaignSends.push({
		campaignId: campaign._id,
		recipients,
		sentAt: options.now().toISOString(),
	});
	return {
		status: 200,
		body: {
			status: 'success',
			message: MESSAGES.campaignSendingStarted,
			data: { campaignId: campaign._id, recipientCount: recipients.length },
		},
		summary: `campaign ${campaign._id} sent to ${sentTo}: ${someOf(recipients)}`,
	};
}

// ------------------------------------------- GET /examples/contacts-export.csv (not the API)

/**
 * The contacts export examples/csv-contact-sync.json downloads under `npm run dev`: a stand-in
 * for the user's own file, read when asked so an edit shows at once.
 * @returns {Reply}
 */
function contactsExport() {
	const file = path.join(__dirname, '../../examples/contacts-export.csv');
	return { status: 200, body: fs.readFileSync(file, 'utf8'), summary: 'contacts export served' };
}

/**
 * Routes under basePath, keyed by 'METHOD /path'.
 * @type {Readonly<Record<string, (request: RecordedRequest, context: RouteContext) => Reply>>}
 */
const ROUTES = Object.freeze({
	'POST /email/send': sendEmail,
	'POST /list/addProfiles': addProfiles,
	'POST /list/create': createList,
	'POST /campaign/create': createCampaign,
	'POST /campaign/send': sendCampaign,
});

/**
 * Files the example workflows download, under basePath too; not part of the API.
 * @type {Readonly<Record<string, (request: RecordedRequest, context: RouteContext) => Reply>>}
 */
const DOWNLOADS = Object.freeze({ 'GET /examples/contacts-export.csv': contactsExport });

module.exports = { ROUTES, DOWNLOADS, addNewProfiles };
