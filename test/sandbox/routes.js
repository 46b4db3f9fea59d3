// @ts-check
'use strict';

// The operations as functions (request, context) -> reply, checking in the spec's order: key,
// JSON, fields (a schema's first issue is the answer, so schemas carry the wording), rules, quota.

const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const { STATUS_CODES } = require('node:http');
const path = require('node:path');
const { z } = require('zod');

/**
 * @typedef {import('./server').RecordedRequest} RecordedRequest
 * @typedef {import('./server').ResolvedOptions} ResolvedOptions
 * @typedef {{ options: ResolvedOptions, state: import('./server').SandboxState }} RouteContext
 * @typedef {{ status: number, body: unknown, summary?: string }} Reply  summary: for the log
 * @typedef {import('./server').StoredProfile} StoredProfile
 */

/** @param {number} status @param {string} text @returns {Reply} */
const failure = (status, text) => ({ status, body: { status: 'error', error: text } });
/** The spec's other error body, for 401, a route's 404 and 500. @param {number} status @param {string} text @returns {Reply} */
const refusal = (status, text) => ({ status, body: { status: 'error', message: text } });
/** @param {unknown} data @param {string} [message] @param {string} [summary] @returns {Reply} */
const success = (data, message, summary) => ({
	status: 200,
	body: { status: 'success', ...(message && { message }), data },
	summary,
});
const INVALID_API_KEY = refusal(401, 'Invalid API key');
const NOT_FOUND = refusal(404, 'Not found');
const INTERNAL_ERROR = refusal(500, 'Internal server error. Please retry later.');
const QUOTA_EXCEEDED = failure(429, 'Daily email quota exceeded. Please try again tomorrow.');

// ---------------------------------------------------------------- body schemas

const requiredString = (/** @type {string} */ field) =>
	z.string({
		required_error: `Field "${field}" is required`,
		invalid_type_error: `Field "${field}" must be a string`,
	});
/** Empty is refused, white space is not (the subjects). @param {string} field */
const nonEmpty = (field) => requiredString(field).min(1, `Field "${field}" must not be empty`);
const hasText = (/** @type {string} */ value) => value.trim() !== '';
const requiredText = (/** @type {string} */ field) =>
	requiredString(field).refine(hasText, `Field "${field}" must not be empty`);
const optionalString = (/** @type {string} */ field) =>
	z.string({ invalid_type_error: `Field "${field}" must be a string` }).optional();

/** Names where the bad value is ('profiles[2].email must be ...'). @param {string} problem @returns {{ errorMap: z.ZodErrorMap }} */
const locatedError = (problem) => ({
	errorMap: ({ path }) => ({
		message: `${path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i ? `.${part}` : part)).join('')} ${problem}`,
	}),
});

/** @param {z.RefinementCtx} ctx @param {string} message */
const issue = (ctx, message) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });

/** @param {'profile' | 'list'} kind @param {string} field */
const idList = (kind, field) =>
	z
		.array(z.string(locatedError(`must be a ${kind} ID string`)), {
			invalid_type_error: `Field "${field}" must be an array of ${kind} IDs`,
		})
		.optional();

const profileSchema = z.object(
	{
		email: z.string(locatedError('must be a valid email address')).email(),
		firstName: z.string(locatedError('must be a string')).optional(),
		lastName: z.string(locatedError('must be a string')).optional(),
	},
	locatedError('must be an object with an email'),
);

/** @template {z.ZodRawShape} Shape @param {Shape} shape */
const bodyOf = (shape) =>
	z.object(shape, { invalid_type_error: 'Request body must be a JSON object' });

const sendEmailBodySchema = bodyOf({
	to: requiredString('to').email({ message: 'Invalid email format for field "to"' }),
	from: requiredString('from').email({ message: 'Invalid email format for field "from"' }),
	subject: nonEmpty('subject'),
	html: optionalString('html'),
	text: optionalString('text'),
	templateId: optionalString('templateId'),
	templateVariables: z
		.record(z.string(), z.unknown(), {
			invalid_type_error: 'Field "templateVariables" must be an object',
		})
		.superRefine((variables, ctx) => {
			for (const [key, value] of Object.entries(variables)) {
				const scalar = ['string', 'boolean'].includes(typeof value) || Number.isFinite(value);
				if (!scalar) issue(ctx, `Template variable "${key}" must be a string, number or boolean`);
			}
		})
		// Strings in the published usage; numbers and booleans are stored stringified.
		.transform((variables) =>
			Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, String(value)])),
		)
		.optional(),
}).superRefine((body, ctx) => {
	const given = [body.html, body.text, body.templateId].filter((field) => field !== undefined);
	if (given.length !== 1) issue(ctx, 'Provide exactly one of html, text or templateId');
	else if (body.templateVariables !== undefined && body.templateId === undefined)
		issue(ctx, 'templateVariables can only be used together with templateId');
});

const addProfilesBodySchema = bodyOf({
	profiles: z.array(profileSchema, {
		required_error: 'profiles array is required',
		invalid_type_error: 'profiles array is required',
	}),
	listId: optionalString('listId'),
	name: optionalString('name'),
	description: optionalString('description'),
}).superRefine((body, ctx) => {
	if (body.listId === undefined && !body.name?.trim())
		issue(ctx, 'name is required when listId is not provided');
});

// Create List names its fields listName / listDescription and takes profile IDs, unlike Add Profiles.
const createListBodySchema = bodyOf({
	listName: requiredText('listName'),
	listDescription: requiredString('listDescription'),
	profiles: idList('profile', 'profiles'),
});

/** Create Campaign's body, the IDs of the spelling(s) read as `listIds`; another spelling is an unknown field. @param {ResolvedOptions['campaignListField']} read */
function createCampaignBodySchema(read) {
	const fields = read === 'either' ? ['recepientList', 'recipientList'] : [read];
	// Typed with both spellings, holding only those read.
	const lists =
		/** @type {Record<'recepientList' | 'recipientList', ReturnType<typeof idList>>} */ (
			Object.fromEntries(fields.map((field) => [field, idList('list', field)]))
		);
	return bodyOf({
		name: requiredText('name'),
		subject: nonEmpty('subject'),
		content: optionalString('content'),
		...lists,
	}).transform(({ recepientList, recipientList, ...campaign }) => ({
		...campaign,
		listIds: [...new Set([...(recepientList ?? []), ...(recipientList ?? [])])],
	}));
}

const sendCampaignBodySchema = bodyOf({ campaignId: requiredString('campaignId') });

// ---------------------------------------------------------------- shared steps

/** 'a, b, c' or, past 10 items, 'a, ..., j (+7 more)'. @param {string[]} items */
const someOf = (items) =>
	`${items.slice(0, 10).join(', ')}${items.length > 10 ? ` (+${items.length - 10} more)` : ''}`;

/** @param {number} length @returns {string} random lower-case hex digits */
const randomHex = (length) => randomBytes(length / 2).toString('hex');
const newListId = () => `list_${randomHex(16)}`;

/**
 * A route: a `Bearer <key>` header (401 without an accepted key), a JSON body (400), valid for
 * `schema` (the 400 of its first issue), then `handle`.
 * @template T
 * @param {(options: ResolvedOptions) => string[]} headerNames lower-cased
 * @param {z.ZodType<T, any, any> | ((options: ResolvedOptions) => z.ZodType<T, any, any>)} schema
 * @param {(body: T, context: RouteContext, apiKey: string) => Reply} handle
 * @returns {(request: RecordedRequest, context: RouteContext) => Reply}
 */
const route = (headerNames, schema, handle) => (request, context) => {
	const { options } = context;
	const apiKey = headerNames(options)
		.map((name) => {
			const value = request.headers[name];
			return typeof value === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(value.trim())?.[1] : undefined;
		})
		.find((key) => key !== undefined && options.apiKeys.includes(key));
	if (apiKey === undefined) return INVALID_API_KEY;
	if (request.body === undefined) return failure(400, 'Request body must be valid JSON');
	const parsed = (typeof schema === 'function' ? schema(options) : schema).safeParse(request.body);
	if (!parsed.success) return failure(400, parsed.error.issues[0].message);
	return handle(parsed.data, context, apiKey);
};

/** Every route but Add Profiles reads the correctly spelled header. */
const AUTHORIZATION = () => ['authorization'];
/** @param {ResolvedOptions} options */
const listAuthHeaders = ({ listAuthHeader }) =>
	listAuthHeader === 'either' ? ['authroization', 'authorization'] : [listAuthHeader.toLowerCase()];

/**
 * Adds the profiles not in the list yet (any case), with the fields given; each keeps its email's
 * ID in the account. `created`: the profiles new to the account.
 * @param {import('./server').SandboxState} state @param {import('./server').StoredList} list
 * @param {{ email: string, firstName?: string, lastName?: string }[]} profiles
 */
function addNewProfiles(state, list, profiles) {
	const [before, created] = [list.profiles.size, /** @type {StoredProfile[]} */ ([])];
	for (const profile of profiles) {
		const key = profile.email.toLowerCase();
		if (list.profiles.has(key)) continue;
		let profileId = state.profileIdsByEmail.get(key);
		if (profileId === undefined) {
			const stored = { profileId: `prof_${randomHex(16)}`, ...profile };
			profileId = stored.profileId;
			state.profiles.set(profileId, stored);
			state.profileIdsByEmail.set(key, profileId);
			created.push(stored);
		}
		list.profiles.set(key, { profileId, ...profile });
	}
	return { addedCount: list.profiles.size - before, created };
}

/** What the log says of an email's content; an HTML email's links (Send and Wait's answers) can be opened from it. @param {{ html?: string, templateId?: string }} email */
function describeContent({ html, templateId }) {
	if (templateId !== undefined) return `template ${templateId}`;
	if (html === undefined) return 'plain text';
	const hrefs = [...html.matchAll(/href="([^"]*)"/g)];
	const links = hrefs.map(([, href]) => href.replaceAll('&amp;', '&'));
	return ['HTML', ...links].join(', link: ');
}

// ---------------------------------------------------------------- the routes

const sendEmail = route(AUTHORIZATION, sendEmailBodySchema, (email, { options, state }, apiKey) => {
	const { verifiedSenders, templates } = options;
	const from = email.from.toLowerCase();
	if (verifiedSenders && !verifiedSenders.some((sender) => sender.toLowerCase() === from)) {
		return failure(400, `Sender "${email.from}" is not a verified sender`);
	}
	const { templateId } = email;
	if (templateId !== undefined) {
		const variables = Object.hasOwn(templates, templateId) && templates[templateId];
		if (!variables) return failure(400, `Template "${templateId}" not found`);
		const unknown = Object.keys(email.templateVariables ?? {}).find((k) => !variables.includes(k));
		if (unknown !== undefined) {
			const text = `Template variable "${unknown}" does not exist in template "${templateId}"`;
			return failure(400, text);
		}
	}

	// Only accepted emails count against the quota (per key, per UTC day), so it comes last.
	const today = options.now().toISOString().slice(0, 10);
	let counter = state.quota.get(apiKey);
	if (counter?.day !== today) state.quota.set(apiKey, (counter = { day: today, count: 0 }));
	if (counter.count >= options.dailyLimit) return QUOTA_EXCEEDED;
	counter.count += 1;

	const messageId = `msg_${randomUUID()}`;
	state.emails.push({ messageId, apiKey, ...email, queuedAt: options.now().toISOString() });
	return success(
		{ messageId, dailyEmailCount: counter.count, dailyEmailLimit: options.dailyLimit },
		'Email queued successfully',
		`email ${messageId} to ${email.to}, ${describeContent(email)}`,
	);
});

const addProfiles = route(listAuthHeaders, addProfilesBodySchema, (body, { state }) => {
	let list = body.listId === undefined ? undefined : state.lists.get(body.listId);
	if (body.listId !== undefined && !list) return failure(404, 'List not found');
	if (!list) {
		const { name = '', description } = body;
		list = { listId: newListId(), name, description, profiles: new Map() };
		state.lists.set(list.listId, list);
	}
	const { addedCount, created } = addNewProfiles(state, list, body.profiles);
	const summary = created.length
		? `new profiles: ${someOf(created.map(({ profileId, email }) => `${profileId} ${email}`))}`
		: undefined;
	return success({ listId: list.listId, addedCount }, undefined, summary);
});

// Spelled correctly on this endpoint's pages; listAuthHeader is about Add Profiles only.
const createList = route(AUTHORIZATION, createListBodySchema, (body, { state }) => {
	// Every ID is looked up before the list is created: an unknown one changes nothing.
	const profiles = [];
	for (const profileId of new Set(body.profiles ?? [])) {
		const profile = state.profiles.get(profileId);
		if (!profile) return failure(404, `Profile "${profileId}" not found`);
		profiles.push(profile);
	}
	const listId = newListId();
	state.lists.set(listId, {
		listId,
		name: body.listName,
		description: body.listDescription,
		profiles: new Map(profiles.map((profile) => [profile.email.toLowerCase(), { ...profile }])),
	});
	return success({ listId });
});

const createCampaign = route(
	AUTHORIZATION,
	(options) => createCampaignBodySchema(options.campaignListField),
	({ listIds, ...fields }, { options, state }) => {
		const unknown = listIds.find((listId) => !state.lists.has(listId));
		if (unknown !== undefined) return failure(404, `List "${unknown}" not found`);
		// An _id like a MongoDB ObjectId, as in the examples.
		const [_id, createdAt] = [randomHex(24), options.now().toISOString()];
		const campaign = { _id, ...fields, recepientList: listIds, createdAt };
		state.campaigns.set(_id, campaign);
		return success({ campaign });
	},
);

const sendCampaign = route(AUTHORIZATION, sendCampaignBodySchema, (body, { options, state }) => {
	const campaign = state.campaigns.get(body.campaignId);
	if (!campaign) return failure(404, 'Campaign not found');
	// The lists' profiles as they are now, in list order, each email (any case) once.
	/** @type {Map<string, string>} */
	const recipientsByKey = new Map();
	for (const listId of campaign.recepientList) {
		for (const [key, profile] of state.lists.get(listId)?.profiles ?? []) {
			if (!recipientsByKey.has(key)) recipientsByKey.set(key, profile.email);
		}
	}
	const recipients = [...recipientsByKey.values()];
	if (recipients.length === 0) return failure(400, 'Campaign has no recipients');

	// Sending "in the background" is over when the answer leaves. Campaign emails are not
	// transactional: no quota, not in state.emails.
	const sentAt = options.now().toISOString();
	state.campaignSends.push({ campaignId: campaign._id, recipients, sentAt });
	const sentTo = `${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`;
	return success(
		{ campaignId: campaign._id, recipientCount: recipients.length },
		'Campaign sending started',
		`campaign ${campaign._id} sent to ${sentTo}: ${someOf(recipients)}`,
	);
});

/** @type {Readonly<Record<string, (request: RecordedRequest, context: RouteContext) => Reply>>} */
const ROUTES = Object.freeze({
	'POST /email/send': sendEmail,
	'POST /list/addProfiles': addProfiles,
	'POST /list/create': createList,
	'POST /campaign/create': createCampaign,
	'POST /campaign/send': sendCampaign,
	// Not the API: the file examples/csv-contact-sync.json downloads, read when asked so an edit shows.
	'GET /examples/contacts-export.csv': () => ({
		status: 200,
		body: fs.readFileSync(path.join(__dirname, '../../examples/contacts-export.csv'), 'utf8'),
		summary: 'contacts export served',
	}),
});

/** Any exception is the spec's 500. @param {RecordedRequest} request @param {string | undefined} routePath @param {RouteContext} context @returns {Reply} */
function answer(request, routePath, context) {
	const key = `${request.method} ${routePath}`;
	if (!Object.hasOwn(ROUTES, key)) return NOT_FOUND;
	try {
		return ROUTES[key](request, context);
	} catch {
		return INTERNAL_ERROR;
	}
}

/** The spec's error body for a status, so a bare `{ status: 500 }` fault looks real. @param {number} status */
function errorBody(status) {
	if (status < 400) return undefined;
	const known = [INVALID_API_KEY, QUOTA_EXCEEDED, INTERNAL_ERROR].find((r) => r.status === status);
	return (known ?? refusal(status, STATUS_CODES[status] ?? 'Error')).body;
}

/** The API's paths, for faults. */
const PATHS = Object.keys(ROUTES)
	.filter((key) => key.startsWith('POST '))
	.map((key) => key.slice('POST '.length));

module.exports = { answer, errorBody, PATHS, profileSchema, addNewProfiles };
