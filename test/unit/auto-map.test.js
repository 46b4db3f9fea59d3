// @ts-check
'use strict';

/**
 * Map Automatically's mapper (`autoMapper`, built) on the items n8n's nodes and
 * triggers hand over, without the engine. Each row is a small hand-written example of the shape
 * in the n8n-nodes-base 2.41.1 file it cites (dist/nodes/...; scripts/email-sources/ surveys
 * them all); the values are made up. A row expects the profile, or the item's error.
 */

const { autoMapper } = require('./built');

/** @typedef {import('n8n-workflow').IDataObject} IDataObject */

/** The profile the mapper makes of `json`, or `{ error, description }` of the item's failure. @param {IDataObject} json */
function map(json) {
	try {
		return autoMapper([{ json }])(0);
	} catch (error) {
		return { error: error.message, description: error.description };
	}
}

const NO_EMAIL = 'This item has no email field for Map Automatically';

/** @typedef {[source: string, file: string, item: IDataObject, expected: Record<string, string> | string]} Shape @type {Shape[]} */
const SHAPES = [
	// Mapped: the record at the top level, field names in any case or punctuation.
	[
		'Google Contacts CSV export, Extract From File',
		'Files/ExtractFromFile/actions/spreadsheet.operation.js',
		{ 'First Name': 'A', 'E-mail 1 - Value': 'a@x.test', 'E-mail 2 - Value': 'b@x.test' },
		{ email: 'a@x.test', firstName: 'A' },
	],
	[
		'Notion page, simplified',
		'Notion/shared/GenericFunctions.js',
		{ name: 'Hedy Lamarr', property_email: 'h@x.test', property_first_name: 'Hedy' },
		{ email: 'h@x.test', firstName: 'Hedy' },
	],
	// Mapped: a record wrapped one level down by a trigger or an API envelope.
	[
		'Airtable 2.2 Search',
		'Airtable/v2/actions/record/search.operation.js',
		{ id: 'r', fields: { Email: 'a@x.test', 'Last Name': 'L' } },
		{ email: 'a@x.test', lastName: 'L' },
	],
	[
		'HubSpot Contact Get',
		'Hubspot/__schema__/v2.1.0/contact/get.json',
		{ vid: 1, properties: { email: { value: 'd@x.test' }, firstname: { value: 'D' } } },
		{ email: 'd@x.test', firstName: 'D' },
	],
	[
		'ActiveCampaign Contact Get',
		'ActiveCampaign/__schema__/v1.0.0/contact/get.json',
		{ contact: { email: 'm@x.test', firstName: 'M' }, fieldValues: [] },
		{ email: 'm@x.test', firstName: 'M' },
	],
	[
		'Facebook Lead Ads Trigger',
		'FacebookLeadAds/FacebookLeadAdsTrigger.node.js',
		{
			id: '1',
			data: { email: 'l@x.test', first_name: 'L', last_name: 'Ead', full_name: 'L Ead' },
			form: { id: 'f' },
		},
		{ email: 'l@x.test', firstName: 'L', lastName: 'Ead' },
	],
	[
		'Calendly Trigger',
		'Calendly/v2/CalendlyTriggerV2.node.js',
		{
			event: 'invitee.created',
			payload: {
				email: 'i@x.test',
				first_name: 'I',
				scheduled_event: { event_memberships: [{ user_email: 'host@x.test' }] },
			},
		},
		{ email: 'i@x.test', firstName: 'I' },
	],
	[
		'Kit (ConvertKit) Trigger',
		'ConvertKit/ConvertKitTrigger.node.js',
		{ subscriber: { email_address: 's@x.test', first_name: 'S' } },
		{ email: 's@x.test', firstName: 'S' },
	],
	[
		'Okta User Get',
		'Okta/__schema__/v1.0.0/user/getAll.json',
		{
			id: 'u',
			profile: { email: 'o@x.test', firstName: 'O', lastName: 'K', managerEmail: 'boss@x.test' },
		},
		{ email: 'o@x.test', firstName: 'O', lastName: 'K' },
	],
	[
		'Webhook, JSON body',
		'Webhook/Webhook.node.js',
		{ headers: {}, query: {}, body: { email: 'w@x.test' } },
		{ email: 'w@x.test' },
	],
	// Mapped: names from a known name object beside the email.
	[
		'Mailchimp Member Get Many',
		'Mailchimp/__schema__/v1.0.0/member/getAll.json',
		{ email_address: 'e@x.test', full_name: 'E D', merge_fields: { FNAME: 'E', LNAME: 'D' } },
		{ email: 'e@x.test', firstName: 'E', lastName: 'D' },
	],
	[
		'Mailchimp Trigger',
		'Mailchimp/MailchimpTrigger.node.js',
		{
			type: 'subscribe',
			data: { email: 'n@x.test', merges: { EMAIL: 'n@x.test', FNAME: 'N', LNAME: 'M' } },
		},
		{ email: 'n@x.test', firstName: 'N', lastName: 'M' },
	],
	[
		'Google Contacts, raw data',
		'Google/Contacts/GoogleContacts.node.js',
		{
			names: [{ metadata: { primary: true }, givenName: 'K', familyName: 'J' }, { givenName: 'X' }],
			emailAddresses: [{ metadata: { primary: true }, value: 'k@x.test' }, { value: 'kj@x.test' }],
		},
		{ email: 'k@x.test', firstName: 'K', lastName: 'J' },
	],
	// Mapped: the main address of a directory user, and a primary address beside a list.
	[
		'Google Workspace Admin User',
		'Google/GSuiteAdmin/__schema__/v1.0.0/user/getAll.json',
		{
			primaryEmail: 'g@x.test',
			emails: [{ address: 'g2@x.test' }, { address: 'g@x.test', primary: true }],
			recoveryEmail: 'me@home.test',
			name: { givenName: 'G', familyName: 'W' },
		},
		{ email: 'g@x.test', firstName: 'G', lastName: 'W' },
	],
	[
		'Microsoft Entra ID User',
		'Microsoft/Entra/descriptions/UserDescription.js',
		{
			mail: 'm@corp.test',
			otherMails: ['m@home.test'],
			userPrincipalName: 'm@corp.onmicrosoft.test',
			givenName: 'M',
			surname: 'E',
		},
		{ email: 'm@corp.test', firstName: 'M', lastName: 'E' },
	],
	[
		'BambooHR Employee',
		'BambooHr/__schema__/v1.0.0/employee/getAll.json',
		{ id: '1', workEmail: 'b@corp.test', firstName: 'B' },
		{ email: 'b@corp.test', firstName: 'B' },
	],
	[
		'Affinity Person',
		'Affinity/__schema__/v1.0.0/person/getAll.json',
		{ primary_email: 'p@x.test', emails: ['p2@x.test', 'p@x.test'], first_name: 'P' },
		{ email: 'p@x.test', firstName: 'P' },
	],
	[
		'Pipedrive Person (v1)',
		'Pipedrive/__schema__/v1.0.0/person/getAll.json',
		{
			email: [
				{ value: 'h@x.test', primary: false },
				{ value: 'w@x.test', primary: true },
			],
			cc_email: 'acme@pipedrivemail.test',
			owner_id: { email: 'owner@acme.test' },
		},
		{ email: 'w@x.test' },
	],
	[
		'Google Contacts, simplified, one address',
		'Google/Contacts/GenericFunctions.js',
		{ names: { givenName: 'C', familyName: 'D' }, emailAddresses: { work: ['c@x.test'] } },
		{ email: 'c@x.test', firstName: 'C', lastName: 'D' },
	],
	// Refused: only someone else's addresses. A list with none primary: the table below.
	[
		'Google Calendar Event',
		'Google/Calendar/__schema__/v1.3.0/event/get.json',
		{
			creator: { email: 'c@x.test' },
			organizer: { email: 'o@x.test' },
			attendees: [{ email: 'a@x.test' }],
		},
		NO_EMAIL,
	],
	[
		'Zoom Meeting',
		'Zoom/__schema__/v1.0.0/meeting/get.json',
		{ host_email: 'h@x.test', settings: { meeting_invitees: [{ email: 'i@x.test' }] } },
		NO_EMAIL,
	],
	[
		'Form Trigger, referral form',
		'Form/FormTrigger.node.js',
		{ 'Your Email': 'me@x.test', "Friend's Email": 'f@x.test' },
		NO_EMAIL,
	],
	[
		'Two envelopes that differ',
		'Webhook/Webhook.node.js',
		{ body: { email: 'a@x.test' }, query: {}, data: { email: 'b@x.test' } },
		'The fields "body.email" and "data.email" both give the email and differ',
	],
];

/** @type {Array<[rule: string, item: IDataObject, expected: Record<string, string> | string]>} */
const RULES = [
	[
		'other fields are ignored, values trimmed',
		{ email: '  a@x.test ', first_name: ' Ann ', phone: '+1 555', company: 'Acme' },
		{ email: 'a@x.test', firstName: 'Ann' },
	],
	['names are optional', { email: 'b@x.test', lastName: '' }, { email: 'b@x.test' }],
	[
		'two fields for the email that agree are fine',
		{ email: 'b@x.test', Email: 'b@x.test' },
		{ email: 'b@x.test' },
	],
	[
		'two fields for the email that differ fail, naming both',
		{ email: 'a@x.test', Email: 'o@x.test' },
		'The fields "email" and "Email" both give the email and differ',
	],
	[
		'a full name alone is never split',
		{ email: 'j@x.test', name: 'Jenny Rosen', shipping: { name: 'Jenny Rosen' } },
		{ email: 'j@x.test' },
	],
	[
		"names only beside the email, not in someone else's object",
		{ email: 'l@x.test', billing: { first_name: 'Acme', last_name: 'Accounts' } },
		{ email: 'l@x.test' },
	],
	[
		'names only beside the email, not above it',
		{ first_name: 'Top', data: { email: 'd@x.test' } },
		{ email: 'd@x.test' },
	],
];

test.each([
	...SHAPES,
	...RULES.map(
		/** @returns {Shape} */ ([rule, item, expected]) => [rule, 'a rule', item, expected],
	),
])('%s (%s)', (_source, _file, item, expected) => {
	const result = map(item);
	if (typeof expected === 'string') expect(result.error).toBe(expected);
	else expect(result).toEqual(expected);
});

// The shapes of Pipedrive Person Search, Pipedrive Person (v2), Keap Contact (under an envelope
// here) and Google Contacts simplified, and an export's column.
test.each([
	[{ emails: ['a@x.test', 'b@x.test'] }, 'emails', '{{ $json.emails[0] }}'],
	[
		{ emails: [{ value: 'a@x.test' }, { value: 'b@x.test' }] },
		'emails',
		'{{ $json.emails[0].value }}',
	],
	[
		{ payload: { email_addresses: [{ email: 'a@x.test' }, { email: 'b@x.test' }] } },
		'payload.email_addresses',
		'{{ $json.payload.email_addresses[0].email }}',
	],
	[
		{ emailAddresses: { home: ['a@x.test'], work: ['b@x.test'] } },
		'emailAddresses',
		'{{ $json.emailAddresses.home[0] }}',
	],
	[{ 'E-mail': ['a@x.test', 'b@x.test'] }, 'E-mail', '{{ $json["E-mail"][0] }}'],
])(
	'a list of different addresses, none primary, fails naming its field, and the example expression fits it: %j',
	(item, field, example) => {
		const { error, description } = map(item);
		expect(error).toBe(
			`The field "${field}" holds 2 different addresses and none is marked primary`,
		);
		expect(description).toContain(example);
	},
);

test("no email field: the error names the item's fields and the addresses it did not take", () => {
	const { error, description } = map({
		id: 1,
		organizer: { email: 'o@x.test' },
		attendees: [{ email: 'a@x.test' }],
		cc_email: 'c@x.test',
		fields: { Name: 'N' },
	});
	expect(error).toBe(NO_EMAIL);
	expect(description).toContain(
		'The item\'s fields: "id", "organizer", "attendees", "cc_email", "fields".',
	);
	expect(description).toContain('Under "fields": "Name".');
	expect(description).toContain(
		'Not taken, as each may be someone else\'s or another address: "cc_email", "organizer.email", "attendees[].email".',
	);
});
