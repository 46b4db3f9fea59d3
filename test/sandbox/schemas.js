// @ts-check
'use strict';

/**
 * Every zod schema and every response text of the sandbox, in one place.
 * Route handlers report the message of the first zod issue, so each schema
 * carries the exact wording the sandbox answers with.
 */

const { z } = require('zod');

const MESSAGES = Object.freeze({
	invalidApiKey: 'Invalid API key',
	invalidJson: 'Request body must be valid JSON',
	bodyNotObject: 'Request body must be a JSON object',
	notFound: 'Not found',
	internalError: 'Internal server error. Please retry later.',
	emailQueued: 'Email queued successfully',
	quotaExceeded: 'Daily email quota exceeded. Please try again tomorrow.',
	exactlyOneContent: 'Provide exactly one of html, text or templateId',
	variablesWithoutTemplate: 'templateVariables can only be used together with templateId',
	profilesRequired: 'profiles array is required',
	nameRequired: 'name is required when listId is not provided',
	listNotFound: 'List not found',
	profileIdsNotArray: 'Field "profiles" must be an array of profile IDs',
	campaignNotFound: 'Campaign not found',
	campaignWithoutRecipients: 'Campaign has no recipients',
	campaignSendingStarted: 'Campaign sending started',
	/** @param {string} field */
	invalidEmailFormat: (field) => `Invalid email format for field "${field}"`,
	/** @param {string} field */
	fieldRequired: (field) => `Field "${field}" is required`,
	/** @param {string} field */
	fieldNotString: (field) => `Field "${field}" must be a string`,
	/** @param {string} field */
	fieldEmpty: (field) => `Field "${field}" must not be empty`,
	/** @param {string} profileId */
	profileNotFound: (profileId) => `Profile "${profileId}" not found`,
	/** @param {string} field */
	listIdsNotArray: (field) => `Field "${field}" must be an array of list IDs`,
	/** @param {string} listId */
	listIdNotFound: (listId) => `List "${listId}" not found`,
	/** @param {string} from */
	senderNotVerified: (from) => `Sender "${from}" is not a verified sender`,
	/** @param {string} templateId */
	templateNotFound: (templateId) => `Template "${templateId}" not found`,
	/** @param {string} key @param {string} templateId */
	unknownTemplateVariable: (key, templateId) =>
		`Template variable "${key}" does not exist in template "${templateId}"`,
	/** @param {string} key */
	templateVariableNotScalar: (key) =>
		`Template variable "${key}" must be a string, number or boolean`,
});

// ---------------------------------------------------------------- helpers

/** @param {string} field */
const requiredString = (field) =>
	z.string({
		required_error: MESSAGES.fieldRequired(field),
		invalid_type_error: MESSAGES.fieldNotString(field),
	});

/** A required string with more than white space in it. @param {string} field */
const requiredText = (field) =>
	requiredString(field).refine((value) => value.trim() !== '', {
		message: MESSAGES.fieldEmpty(field),
	});

/** @param {string} field */
const optionalString = (field) =>
	z.string({ invalid_type_error: MESSAGES.fieldNotString(field) }).optional();

/**
 * 'profiles[2].email' for the zod path ['profiles', 2, 'email'].
 * @param {(string|number)[]} path
 */
const describePath = (path) =>
	path
		.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`))
		.join('');

/**
 * Error map that prefixes a message with the location of the offending value,
 * so a bad profile is reported with its index.
 * @param {string} problem
 * @returns {{ errorMap: z.ZodErrorMap }}
 */
const locatedError = (problem) => ({
	errorMap: (issue) => ({ message: `${describePath(issue.path)} ${problem}` }),
});

/** @param {unknown} value */
const isScalar = (value) =>
	typeof value === 'string' ||
	typeof value === 'boolean' ||
	(typeof value === 'number' && Number.isFinite(value));

// ---------------------------------------------------------------- POST /email/send

/** Content fields of which exactly one must be given. */
const CONTENT_FIELDS = /** @type {const} */ (['html', 'text', 'templateId']);

const templateVariablesSchema = z
	.record(z.string(), z.unknown(), {
		invalid_type_error: 'Field "templateVariables" must be an object',
	})
	.superRefine((variables, ctx) => {
		for (const [key, value] of Object.entries(variables)) {
			if (!isScalar(value)) {
				ctx.addIssue({
					code: z.ZodIssueCode.custom,
					message: MESSAGES.templateVariableNotScalar(key),
				});
			}
		}
	})
	// Values are strings in the published usage; numbers and booleans are accepted and stringified.
	.transform((variables) =>
		Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, String(value)])),
	);

// Key order matters: the first failing field is the one reported.
const sendEmailBodySchema = z
	.object(
		{
			to: requiredString('to').email({ message: MESSAGES.invalidEmailFormat('to') }),
			from: requiredString('from').email({ message: MESSAGES.invalidEmailFormat('from') }),
			subject: requiredString('subject').min(1, { message: MESSAGES.fieldEmpty('subject') }),
			html: optionalString('html'),
			text: optionalString('text'),
			templateId: optionalString('templateId'),
			templateVariables: templateVariablesSchema.optional(),
		},
		{ invalid_type_error: MESSAGES.bodyNotObject },
	)
	.superRefine((body, ctx) => {
		const given = CONTENT_FIELDS.filter((field) => body[field] !== undefined);
		if (given.length !== 1) {
			ctx.addIssue({ code: z.ZodIssueCode.custom, message: MESSAGES.exactlyOneContent });
		} else if (body.templateVariables !== undefined && body.templateId === undefined) {
			ctx.addIssue({ code: z.ZodIssueCode.custom, message: MESSAGES.variablesWithoutTemplate });
		}
	});

// ---------------------------------------------------------------- POST /list/addProfiles

const profileSchema = z.object(
	{
		email: z.string(locatedError('must be a valid email address')).email(),
		firstName: z.string(locatedError('must be a string')).optional(),
		lastName: z.string(locatedError('must be a string')).optional(),
	},
	locatedError('must be an object with an email'),
);

const addProfilesBodySchema = z
	.object(
		{
			profiles: z.array(profileSchema, {
				required_error: MESSAGES.profilesRequired,
				invalid_type_error: MESSAGES.profilesRequired,
			}),
			listId: optionalString('listId'),
			name: optionalString('name'),
			description: optionalString('description'),
		},
		{ invalid_type_error: MESSAGES.bodyNotObject },
	)
	.superRefine((body, ctx) => {
		if (body.listId === undefined && !body.name?.trim()) {
			ctx.addIssue({ code: z.ZodIssueCode.custom, message: MESSAGES.nameRequired });
		}
	});

// ---------------------------------------------------------------- POST /list/create

// Create List names its fields listName / listDescription and takes profile IDs, unlike Add Profiles.
const createListBodySchema = z.object(
	{
		listName: requiredText('listName'),
		listDescription: requiredString('listDescription'),
		profiles: z
			.array(z.string(locatedError('must be a profile ID string')), {
				invalid_type_error: MESSAGES.profileIdsNotArray,
			})
			.optional(),
	},
	{ invalid_type_error: MESSAGES.bodyNotObject },
);

// ---------------------------------------------------------------- POST /campaign/create

/** Which spelling of the list IDs field Create Campaign reads (option `campaignListField`). */
const CAMPAIGN_LIST_FIELDS = /** @type {const} */ (['recepientList', 'recipientList', 'either']);

/** @param {string} field */
const listIdsSchema = (field) =>
	z
		.array(z.string(locatedError('must be a list ID string')), {
			invalid_type_error: MESSAGES.listIdsNotArray(field),
		})
		.optional();

const campaignFields = {
	name: requiredText('name'),
	// Like Send Email's subject: empty is refused, white space is not.
	subject: requiredString('subject').min(1, { message: MESSAGES.fieldEmpty('subject') }),
	content: optionalString('content'),
};

/**
 * The campaign with its list IDs under `listIds`, whichever spelling carried them, each once.
 * @param {{ name: string, subject: string, content?: string,
 *   recepientList?: string[], recipientList?: string[] }} body
 */
const withListIds = ({ recepientList, recipientList, ...fields }) => ({
	...fields,
	listIds: [...new Set([...(recepientList ?? []), ...(recipientList ?? [])])],
});

const bodyNotObject = { invalid_type_error: MESSAGES.bodyNotObject };

/**
 * Create Campaign's body per `campaignListField`. A spelling that is not read is an unknown field,
 * ignored like any other.
 */
const createCampaignBodySchemas = {
	recepientList: z
		.object({ ...campaignFields, recepientList: listIdsSchema('recepientList') }, bodyNotObject)
		.transform(withListIds),
	recipientList: z
		.object({ ...campaignFields, recipientList: listIdsSchema('recipientList') }, bodyNotObject)
		.transform(withListIds),
	either: z
		.object(
			{
				...campaignFields,
				recepientList: listIdsSchema('recepientList'),
				recipientList: listIdsSchema('recipientList'),
			},
			bodyNotObject,
		)
		.transform(withListIds),
};

// ---------------------------------------------------------------- POST /campaign/send

const sendCampaignBodySchema = z.object(
	{ campaignId: requiredString('campaignId') },
	bodyNotObject,
);

// ---------------------------------------------------------------- sandbox options and faults

/** Every route path under basePath; a fault's `path` is one of them. */
const ROUTE_PATHS = /** @type {const} */ ([
	'/email/send',
	'/list/addProfiles',
	'/list/create',
	'/campaign/create',
	'/campaign/send',
]);
/** @typedef {typeof ROUTE_PATHS[number]} RoutePath */

const LIST_AUTH_HEADERS = /** @type {const} */ (['Authroization', 'Authorization', 'either']);

const DEMO_API_KEY = 'be_sandbox_demo_key';

const seedListSchema = z.object({
	listId: z.string().min(1),
	name: z.string().default(''),
	description: z.string().optional(),
	profiles: z.array(profileSchema).default([]),
});

const seedCampaignSchema = z.object({
	_id: z.string().regex(/^[0-9a-f]{24}$/, '_id must be 24 lower-case hex characters'),
	name: z.string().min(1),
	subject: z.string().min(1),
	content: z.string().optional(),
	recepientList: z.array(z.string()).default(() => []),
});

const seedProfileSchema = profileSchema.extend({ profileId: z.string().min(1) });

/** Seeded profiles: each profileId and each email (case-insensitive) at most once. */
const seedProfilesSchema = z.array(seedProfileSchema).superRefine((profiles, ctx) => {
	const ids = new Set();
	const emails = new Set();
	for (const { profileId, email } of profiles) {
		if (ids.has(profileId)) {
			ctx.addIssue({
				code: z.ZodIssueCode.custom,
				message: `profileId ${profileId} is seeded twice`,
			});
		}
		if (emails.has(email.toLowerCase())) {
			ctx.addIssue({ code: z.ZodIssueCode.custom, message: `email ${email} is seeded twice` });
		}
		ids.add(profileId);
		emails.add(email.toLowerCase());
	}
});

const functionSchema = z.custom((value) => typeof value === 'function', {
	message: 'must be a function',
});

const sandboxOptionsSchema = z
	.object({
		port: z.number().int().min(0).max(65535).default(0),
		host: z.string().min(1).default('127.0.0.1'),
		basePath: z
			.string()
			.regex(/^\/.*[^/]$/, 'basePath must start with "/" and not end with "/"')
			.default('/api/v0/dev'),
		apiKeys: z.array(z.string().min(1)).default(() => [DEMO_API_KEY]),
		dailyLimit: z.number().int().min(0).default(100),
		templates: z
			.record(z.string(), z.array(z.string()))
			.default(() => ({ tmpl_welcome: ['firstName', 'company'] })),
		verifiedSenders: z
			.array(z.string())
			.nullable()
			.default(() => ['hello@example.com', 'noreply@example.com']),
		listAuthHeader: z.enum(LIST_AUTH_HEADERS).default('Authroization'),
		latencyMs: z.number().int().min(0).default(0),
		faultRate: z.number().min(0).max(1).default(0),
		randomFaults: z.lazy(() => faultListSchema.min(1)).default(() => [{ status: 500 }]),
		faultSeed: z.number().int().optional(),
		profiles: seedProfilesSchema.default(() => []),
		lists: z.array(seedListSchema).default(() => []),
		campaigns: z.array(seedCampaignSchema).default(() => []),
		campaignListField: z.enum(CAMPAIGN_LIST_FIELDS).default('recepientList'),
		now: /** @type {z.ZodType<() => Date>} */ (functionSchema).default(() => () => new Date()),
		onResponse: /** @type {z.ZodType<(entry: any) => void>} */ (functionSchema).optional(),
	})
	.strict();

const faultSchema = z
	.object({
		path: z.enum(ROUTE_PATHS).optional(),
		status: z.number().int().min(100).max(599).optional(),
		body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
		headers: z.record(z.string(), z.string()).optional(),
		action: z.enum(['reset', 'drop', 'hang', 'delay']).optional(),
		delayMs: z.number().int().min(0).optional(),
	})
	.strict();

const faultListSchema = z.array(faultSchema);

module.exports = {
	MESSAGES,
	DEMO_API_KEY,
	LIST_AUTH_HEADERS,
	sendEmailBodySchema,
	addProfilesBodySchema,
	createListBodySchema,
	CAMPAIGN_LIST_FIELDS,
	createCampaignBodySchemas,
	sendCampaignBodySchema,
	ROUTE_PATHS,
	sandboxOptionsSchema,
	faultListSchema,
};
