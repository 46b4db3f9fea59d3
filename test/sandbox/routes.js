// @ts-check
'use strict';

/**
 * The BasicsEngage operations as plain functions: (request, context) -> reply, each with the zod
 * schema of its body. No I/O here, so each route reads top to bottom in the order the spec
 * implies: authentication, JSON parsing, field validation (the first zod issue's message is the
 * answer, so each schema carries the exact wording, in field order), business rules, quota.
 */

const { randomBytes, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { z } = require('zod');

/**
 * @typedef {import('./server').RecordedRequest} RecordedRequest
 * @typedef {import('./server').SandboxState} SandboxState
 * @typedef {import('./server').ResolvedOptions} ResolvedOptions
 * @typedef {import('./server').StoredProfile} StoredProfile
 * @typedef {{ options: ResolvedOptions, state: SandboxState }} RouteContext
 * @typedef {{ status: number, body: unknown, summary?: string }} Reply  summary: what the
 *   request changed that the answer does not show, for the log (ResponseLogEntry.summary)
 */

/** @param {number} status @param {string} text @returns {Reply} */
const failure = (status, text) => ({ status, body: { status: 'error', error: text } });
/** @param {unknown} data @returns {Reply} */
const success = (data, message = undefined, summary = undefined) => ({
	status: 200,
	body: { status: 'success', ...(message && { message }), data },
	summary,
});
/** @type {Reply} */
const INVALID_API_KEY = { status: 401, body: { status: 'error', message: 'Invalid API key' } };

// ---------------------------------------------------------------- body schemas

/** @param {string} field */
const fieldEmpty = (field) => `Field "${field}" must not be empty`;
const bodyNotObject = { invalid_type_error: 'Request body must be a JSON object' };

/** @param {string} field */
const requiredString = (field) =>
	z.string({
		required_error: `Field "${field}" is required`,
		invalid_type_error: `Field "${field}" must be a string`,
	});
/** Empty is refused, white space is not (Send Email's and Create Campaign's subject). @param {string} field */
const nonEmpty = (field) => requiredString(field).min(1, { message: fieldEmpty(field) });
/** A required string with more than white space in it. @param {string} field */
const requiredText = (field) =>
	requiredString(field).refine((value) => value.trim() !== '', { message: fieldEmpty(field) });
/** @param {string} field */
const optionalString = (field) =>
	z.string({ invalid_type_error: `Field "${field}" must be a string` }).optional();

/**
 * An error map that names where the bad value is ('profiles[2].email must be ...'), so a bad
 * profile is reported with its index.
 * @param {string} problem @returns {{ errorMap: z.ZodErrorMap }}
 */
const locatedError = (problem) => ({
	errorMap: ({ path }) => ({
		message: `${path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i ? `.${part}` : part)).join('')} ${problem}`,
	}),
});

/** @param {z.RefinementCtx} ctx @param {string} message */
const issue = (ctx, message) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });

/** @param {string} kind 'profile' or 'list' @param {string} field */
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

const sendEmailBodySchema = z
	.object(
		{
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
						if (!scalar)
							issue(ctx, `Template variable "${key}" must be a string, number or boolean`);
					}
				})
				// Strings in the published usage; numbers and booleans are accepted and stringified.
				.transform((variables) =>
					Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, String(value)])),
				)
				.optional(),
		},
		bodyNotObject,
	)
	.superRefine((body, ctx) => {
		const given = [body.html, body.text, body.templateId].filter((field) => field !== undefined);
		if (given.length !== 1) issue(ctx, 'Provide exactly one of html, text or templateId');
		else if (body.templateVariables !== undefined && body.templateId === undefined)
			issue(ctx, 'templateVariables can only be used together with templateId');
	});

const addProfilesBodySchema = z
	.object(
		{
			profiles: z.array(profileSchema, {
				required_error: 'profiles array is required',
				invalid_type_error: 'profiles array is required',
			}),
			listId: optionalString('listId'),
			name: optionalString('name'),
			description: optionalString('description'),
		},
		bodyNotObject,
	)
	.superRefine((body, ctx) => {
		if (body.listId === undefined && !body.name?.trim())
			issue(ctx, 'name is required when listId is not provided');
	});

// Create List names its fields listName / listDescription and takes profile IDs, unlike Add Profiles.
const createListBodySchema = z.object(
	{
		listName: requiredText('listName'),
		listDescription: requiredString('listDescription'),
		profiles: idList('profile', 'profiles'),
	},
	bodyNotObject,
);

/** Which spelling of the list IDs field Create Campaign reads (option `campaignListField`). */
const CAMPAIGN_LIST_FIELDS = /** @type {const} */ (['recepientList', 'recipientList', 'either']);

/**
 * Create Campaign's body per `campaignListField`, its list IDs under `listIds` (each once),
 * whichever spelling carried them. A spelling that is not read is ignored like any unknown field.
 */
const createCampaignBodySchemas = Object.fromEntries(
	CAMPAIGN_LIST_FIELDS.map((read) => {
		const fields = read === 'either' ? ['recepientList', 'recipientList'] : [read];
		const schema = z
			.object(
				{
					name: requiredText('name'),
					subject: nonEmpty('subject'),
					content: optionalString('content'),
					...Object.fromEntries(fields.map((field) => [field, idList('list', field)])),
				},
				bodyNotObject,
			)
			.transform(({ recepientList, recipientList, ...campaign }) => ({
				...campaign,
				listIds: [...new Set([...(recepientList ?? []), ...(recipientList ?? [])])],
			}));
		return [read, schema];
	}),
);

const sendCampaignBodySchema = z.object(
	{ campaignId: requiredString('campaignId') },
	bodyNotObject,
);

// ---------------------------------------------------------------- shared steps

/** Most items a log summary names before it says how many more there are. */
const SUMMARY_ITEMS = 10;

/** 'a, b, c' or 'a, b, c (+7 more)'. @param {string[]} items */
function someOf(items) {
	const more = items.length - SUMMARY_ITEMS;
	return `${items.slice(0, SUMMARY_ITEMS).join(', ')}${more > 0 ? ` (+${more} more)` : ''}`;
}

/** @param {number} length @returns {string} random lower-case hex digits */
const randomHex = (length) => randomUUID().replace(/-/g, '').slice(0, length);
const newListId = () => `list_${randomHex(16)}`;

/**
 * A route: the first accepted key of a `Bearer <key>` header (scheme case-insensitive) among
 * `headerNames` (lower-cased; per the options for Add Profiles), else 401; then a JSON body (else
 * 400), valid for `schema` (else the 400 of its first issue); then `handle`.
 * @template T
 * @param {string[] | ((options: ResolvedOptions) => string[])} headerNames
 * @param {z.ZodType<T, any, any> | ((options: ResolvedOptions) => z.ZodType<T, any, any>)} schema
 * @param {(body: T, context: RouteContext, apiKey: string) => Reply} handle
 * @returns {(request: RecordedRequest, context: RouteContext) => Reply}
 */
const route = (headerNames, schema, handle) => (request, context) => {
	const { options } = context;
	const names = typeof headerNames === 'function' ? headerNames(options) : headerNames;
	const apiKey = names
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

/** Every route but Add Profiles reads the key from the correctly spelled header. */
const AUTHORIZATION = ['authorization'];
/** Header names Add Profiles reads, per the `listAuthHeader` option. */
const LIST_AUTH_HEADER_NAMES = {
	Authroization: ['authroization'],
	Authorization: ['authorization'],
	either: ['authroization', 'authorization'],
};

/**
 * Adds profiles not yet in the list (emails compared case-insensitively). The list keeps the
 * fields given here; the profile's ID is the one its email has in the account, where an email
 * seen for the first time gets a new profile with the fields given this time.
 * @param {SandboxState} state
 * @param {import('./server').StoredList} list
 * @param {{ email: string, firstName?: string, lastName?: string }[]} profiles
 * @returns {{ addedCount: number, created: StoredProfile[] }} how many were added to the list,
 *   and the profiles new to the account
 */
function addNewProfiles(state, list, profiles) {
	let addedCount = 0;
	/** @type {StoredProfile[]} */
	const created = [];
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
		addedCount += 1;
	}
	return { addedCount, created };
}

// ---------------------------------------------------------------- the routes

const sendEmail = route(AUTHORIZATION, sendEmailBodySchema, (email, { options, state }, apiKey) => {
	const { verifiedSenders, templates } = options;
	const from = email.from.toLowerCase();
	if (verifiedSenders && !verifiedSenders.some((sender) => sender.toLowerCase() === from)) {
		return failure(400, `Sender "${email.from}" is not a verified sender`);
	}
	if (email.templateId !== undefined) {
		const variables = Object.hasOwn(templates, email.templateId)
			? templates[email.templateId]
			: undefined;
		if (!variables) return failure(400, `Template "${email.templateId}" not found`);
		const unknown = Object.keys(email.templateVariables ?? {}).find(
			(key) => !variables.includes(key),
		);
		if (unknown !== undefined) {
			return failure(
				400,
				`Template variable "${unknown}" does not exist in template "${email.templateId}"`,
			);
		}
	}

	// Only accepted emails count against the quota (per key, per UTC day), so the check comes last.
	const today = options.now().toISOString().slice(0, 10);
	let counter = state.quota.get(apiKey);
	if (counter?.day !== today) state.quota.set(apiKey, (counter = { day: today, count: 0 }));
	if (counter.count >= options.dailyLimit) {
		return failure(429, 'Daily email quota exceeded. Please try again tomorrow.');
	}
	counter.count += 1;

	const messageId = `msg_${randomUUID()}`;
	state.emails.push({ messageId, apiKey, ...email, queuedAt: options.now().toISOString() });
	// The log names the content; an HTML email's links (a Send and Wait email's answers) can be
	// opened from it.
	const content =
		email.templateId !== undefined
			? `template ${email.templateId}`
			: email.html !== undefined
				? [
						'HTML',
						...[...email.html.matchAll(/href="([^"]*)"/g)].map(([, href]) =>
							href.replaceAll('&amp;', '&'),
						),
					].join(', link: ')
				: 'plain text';
	return success(
		{ messageId, dailyEmailCount: counter.count, dailyEmailLimit: options.dailyLimit },
		'Email queued successfully',
		`email ${messageId} to ${email.to}, ${content}`,
	);
});

const addProfiles = route(
	(options) => LIST_AUTH_HEADER_NAMES[options.listAuthHeader],
	// Every profile is validated before any is stored: a bad request changes nothing.
	addProfilesBodySchema,
	(body, { state }) => {
		let list = body.listId === undefined ? undefined : state.lists.get(body.listId);
		if (body.listId !== undefined && !list) return failure(404, 'List not found');
		if (!list) {
			list = {
				listId: newListId(),
				name: body.name ?? '',
				description: body.description,
				profiles: new Map(),
			};
			state.lists.set(list.listId, list);
		}
		const { addedCount, created } = addNewProfiles(state, list, body.profiles);
		const summary = created.length
			? `new profiles: ${someOf(created.map(({ profileId, email }) => `${profileId} ${email}`))}`
			: undefined;
		return success({ listId: list.listId, addedCount }, undefined, summary);
	},
);

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
	(options) => createCampaignBodySchemas[options.campaignListField],
	({ listIds, ...fields }, { options, state }) => {
		const unknown = listIds.find((listId) => !state.lists.has(listId));
		if (unknown !== undefined) return failure(404, `List "${unknown}" not found`);
		/** @type {import('./server').StoredCampaign} */
		const campaign = {
			// A MongoDB-ObjectId-like _id: 24 lower-case hex characters, as in the examples.
			_id: randomBytes(12).toString('hex'),
			...fields,
			recepientList: listIds,
			createdAt: options.now().toISOString(),
		};
		state.campaigns.set(campaign._id, campaign);
		return success({ campaign });
	},
);

const sendCampaign = route(AUTHORIZATION, sendCampaignBodySchema, (body, { options, state }) => {
	const campaign = state.campaigns.get(body.campaignId);
	if (!campaign) return failure(404, 'Campaign not found');
	// The lists' profiles as they are now: lists in the campaign's order, profiles in list
	// order, each email (case-insensitive) once.
	/** @type {Map<string, string>} */
	const recipientsByKey = new Map();
	for (const listId of campaign.recepientList) {
		for (const [key, profile] of state.lists.get(listId)?.profiles ?? []) {
			if (!recipientsByKey.has(key)) recipientsByKey.set(key, profile.email);
		}
	}
	const recipients = [...recipientsByKey.values()];
	if (recipients.length === 0) return failure(400, 'Campaign has no recipients');

	// Sending "in the background" is over when the answer leaves: recorded at once. Campaign
	// emails are not transactional emails: no quota, not in state.emails.
	state.campaignSends.push({
		campaignId: campaign._id,
		recipients,
		sentAt: options.now().toISOString(),
	});
	const sentTo = `${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`;
	return success(
		{ campaignId: campaign._id, recipientCount: recipients.length },
		'Campaign sending started',
		`campaign ${campaign._id} sent to ${sentTo}: ${someOf(recipients)}`,
	);
});

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
	// Not the API: the contacts export examples/csv-contact-sync.json downloads under `npm run
	// dev`, a stand-in for the user's own file, read when asked so an edit shows at once.
	'GET /examples/contacts-export.csv': () => ({
		status: 200,
		body: fs.readFileSync(path.join(__dirname, '../../examples/contacts-export.csv'), 'utf8'),
		summary: 'contacts export served',
	}),
});

module.exports = { ROUTES, CAMPAIGN_LIST_FIELDS, profileSchema, addNewProfiles };
