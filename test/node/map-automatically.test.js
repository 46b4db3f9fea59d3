// @ts-check
'use strict';

/**
 * Add Profiles' Mapping Mode "Map Automatically" (`autoMapInputData`): the email, first name and
 * last name come from each item's own fields, matched by their whole name after lower-casing and
 * dropping spaces and punctuation, at the top level and else one wrapper level down (`fields`,
 * `properties`, `merge_fields`, `names`), with no expression evaluated per item. "Map Each Field Manually"
 * (`defineBelow`) is the default, and a workflow saved without the parameter runs as before.
 */

const {
	addProfilesParameters,
	contacts,
	expectEachInputExactlyOnce,
	runNode,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({ lists: [{ listId: 'lst_crm', name: 'CRM' }] });

/** @param {Record<string, unknown>} [overrides] */
const automatic = (overrides = {}) =>
	addProfilesParameters({
		listMode: 'existing',
		listId: 'lst_crm',
		mappingMode: 'autoMapInputData',
		...overrides,
	});

const sentProfiles = () =>
	sandbox.requestsTo('/list/addProfiles').flatMap((request) => request.body.profiles);

test('field names match after lower-casing and dropping spaces, "_" and "-" (HubSpot, Salesforce, Pipedrive, sheets)', async () => {
	const items = [
		{ email: 'a@customer.test', firstName: 'Ann', lastName: 'Ash' },
		{ Email: 'b@customer.test', first_name: 'Bob', last_name: 'Birch' },
		{ 'E-mail': 'c@customer.test', 'First Name': 'Cy', LastName: 'Cole' },
		{ EMAIL: 'd@customer.test', firstname: 'Di', lastname: 'Dane' },
	];
	const result = await runNode(sandbox, { parameters: automatic(), items });

	expect(result.error).toBeUndefined();
	expect(sentProfiles()).toEqual([
		{ email: 'a@customer.test', firstName: 'Ann', lastName: 'Ash' },
		{ email: 'b@customer.test', firstName: 'Bob', lastName: 'Birch' },
		{ email: 'c@customer.test', firstName: 'Cy', lastName: 'Cole' },
		{ email: 'd@customer.test', firstName: 'Di', lastName: 'Dane' },
	]);
});

test('other fields are ignored, values are trimmed, and names are optional', async () => {
	await runNode(sandbox, {
		parameters: automatic(),
		items: [
			{ email: '  a@customer.test ', first_name: ' Ann ', phone: '+1 555', company: 'Acme' },
			{ email: 'b@customer.test', lastName: '' },
		],
	});
	expect(sentProfiles()).toEqual([
		{ email: 'a@customer.test', firstName: 'Ann' },
		{ email: 'b@customer.test' },
	]);
});

test('no email field: the item fails with invalid_input naming the fields it has; the others are sent', async () => {
	const result = await runNode(sandbox, {
		parameters: automatic(),
		items: [{ mail: 'x@customer.test', name: 'X' }, ...contacts(1)],
		onError: 'continueErrorOutput',
	});

	expect(sentProfiles()).toEqual([
		{ email: 'contact0@customer.test', firstName: 'First0', lastName: 'Last0' },
	]);
	expect(result.errors).toHaveLength(1);
	expect(result.errors[0].json.details.kind).toBe('invalid_input');
	expect(result.errors[0].json.error).toBe('This item has no email field for Map Automatically');
	expect(result.errors[0].json.details.description).toContain('"mail", "name"');
	expectEachInputExactlyOnce(result, 2);
});

test('two fields for the same value that differ fail the item, naming both; equal ones are fine', async () => {
	const result = await runNode(sandbox, {
		parameters: automatic(),
		items: [
			{ email: 'a@customer.test', Email: 'other@customer.test' },
			{ email: 'b@customer.test', Email: 'b@customer.test' },
		],
		onError: 'continueErrorOutput',
	});

	expect(sentProfiles()).toEqual([{ email: 'b@customer.test' }]);
	expect(result.errors.map((item) => [item.json.details.kind, item.json.error])).toEqual([
		['invalid_input', 'The fields "email" and "Email" both give the email and differ'],
	]);
});

test('values are checked like the manual ones: a bad address or an object fails its item', async () => {
	const result = await runNode(sandbox, {
		parameters: automatic(),
		items: [{ email: 'not-an-address' }, { email: 'a@customer.test', firstName: { a: 1 } }],
		onError: 'continueErrorOutput',
	});

	expect(sentProfiles()).toEqual([]);
	expect(result.errors.map((item) => item.json.error)).toEqual([
		'Email is not a valid email address: "not-an-address"',
		'First Name must be text, not an object',
	]);
});

test('no expression is evaluated per item: the manual fields are not read', async () => {
	const result = await runNode(sandbox, {
		parameters: automatic({
			email: '={{ $json.missing.deeper }}',
			additionalFields: { firstName: '={{ $json.missing.deeper }}' },
		}),
		items: contacts(2),
	});

	expect(result.error).toBeUndefined();
	expect(sentProfiles().map((profile) => profile.email)).toEqual([
		'contact0@customer.test',
		'contact1@customer.test',
	]);
});

test('everything else is unchanged: batches, one new list per run, every output paired to its batch', async () => {
	const result = await runNode(sandbox, {
		parameters: addProfilesParameters({
			mappingMode: 'autoMapInputData',
			options: { batchSize: 2 },
		}),
		items: contacts(3),
	});

	const lists = sandbox.requests.map(
		(request) => request.body.listId ?? `new:${request.body.name}`,
	);
	expect(lists).toEqual(['new:Newsletter', expect.stringMatching(/./)]);
	expect(sandbox.state.lists.size).toBe(2);
	expect(result.success.map((item) => item.pairedItem)).toEqual([
		[{ item: 0 }, { item: 1 }],
		[{ item: 2 }],
	]);
});

test('a workflow saved before Mapping Mode (no parameter) maps each field manually, as before', async () => {
	const parameters = addProfilesParameters({
		listMode: 'existing',
		listId: 'lst_crm',
		email: '={{ $json.address }}',
	});
	expect(parameters).not.toHaveProperty('mappingMode');
	await runNode(sandbox, {
		parameters,
		items: [{ address: 'a@customer.test', email: 'b@customer.test' }],
	});
	expect(sentProfiles()).toEqual([{ email: 'a@customer.test' }]);
});

/*
 * The items n8n's own nodes and the usual contact exports hand to Add Profiles. Each shape is
 * taken from the n8n source file named beside it (n8n-io/n8n, packages/nodes-base/nodes/...,
 * as in n8n-nodes-base 2.41.1) or from the export's published column headers; the values are
 * made up.
 */
describe('Map Automatically on what the sources really hand over', () => {
	/** @type {Array<{ source: string, item: Record<string, unknown>, profile: Record<string, string> }>} */
	const mapped = [
		{
			// Airtable/v2/actions/record/search.operation.ts + helpers/utils.ts (legacyFlattenOutput):
			// from version 2.2, the node's default, a record keeps Airtable's own `fields`.
			source: 'Airtable 2.2 Search',
			item: {
				id: 'recA1',
				createdTime: '2026-01-05T10:00:00.000Z',
				fields: {
					Name: 'Ada Lovelace',
					Email: 'ada@customer.test',
					'First Name': 'Ada',
					'Last Name': 'Lovelace',
				},
			},
			profile: { email: 'ada@customer.test', firstName: 'Ada', lastName: 'Lovelace' },
		},
		{
			// Same files: before 2.2 the fields are flattened to the top level.
			source: 'Airtable 2.1 Search',
			item: {
				id: 'recA2',
				createdTime: '2026-01-05T10:00:00.000Z',
				Email: 'alan@customer.test',
				'First Name': 'Alan',
			},
			profile: { email: 'alan@customer.test', firstName: 'Alan' },
		},
		{
			// NocoDB/v2/actions/rows/search.operation.ts: GET /api/v3/data/{base}/{table}/records,
			// whose records are { id, fields }.
			source: 'NocoDB Search',
			item: {
				id: 7,
				fields: {
					Email: 'grace@customer.test',
					FirstName: 'Grace',
					LastName: 'Hopper',
					Phone: null,
				},
			},
			profile: { email: 'grace@customer.test', firstName: 'Grace', lastName: 'Hopper' },
		},
		{
			// Hubspot/V2/HubspotV2.node.ts (contact search: POST /crm/v3/objects/contacts/search) and
			// Hubspot/__schema__/v2.2.0/contact/search.json.
			source: 'HubSpot Contact Search',
			item: {
				id: '151',
				properties: {
					createdate: '2026-02-01T09:00:00.000Z',
					email: 'brian@customer.test',
					firstname: 'Brian',
					hs_object_id: '151',
					lastmodifieddate: '2026-02-02T09:00:00.000Z',
					lastname: 'Kernighan',
				},
				createdAt: '2026-02-01T09:00:00.000Z',
				updatedAt: '2026-02-02T09:00:00.000Z',
				archived: false,
				url: 'https://app.hubspot.com/contacts/62515/record/0-1/151',
			},
			profile: { email: 'brian@customer.test', firstName: 'Brian', lastName: 'Kernighan' },
		},
		{
			// Hubspot/V2/HubspotV2.node.ts (contact getAll: GET /contacts/v1/lists/all/contacts/all)
			// with email among Contact Properties to Include: values wrapped as { value }.
			source: 'HubSpot Contact Get Many',
			item: {
				vid: 51,
				'canonical-vid': 51,
				'portal-id': 62515,
				'is-contact': true,
				properties: {
					firstname: { value: 'Dennis' },
					lastname: { value: 'Ritchie' },
					email: { value: 'dennis@customer.test', versions: [{ value: 'dennis@customer.test' }] },
				},
				'identity-profiles': [
					{
						vid: 51,
						identities: [{ type: 'EMAIL', value: 'dennis@customer.test', 'is-primary': true }],
					},
				],
			},
			profile: { email: 'dennis@customer.test', firstName: 'Dennis', lastName: 'Ritchie' },
		},
		{
			// Mailchimp/__schema__/v1.0.0/member/getAll.json: the names are in merge_fields.
			source: 'Mailchimp Member Get Many',
			item: {
				id: '8f2c',
				email_address: 'edsger@customer.test',
				unique_email_id: 'a1b2',
				full_name: 'Edsger Dijkstra',
				merge_fields: { FNAME: 'Edsger', LNAME: 'Dijkstra', PHONE: '' },
				status: 'subscribed',
				list_id: 'l1',
			},
			profile: { email: 'edsger@customer.test', firstName: 'Edsger', lastName: 'Dijkstra' },
		},
		{
			// Pipedrive/__schema__/v1.0.0/person/getAll.json: `email` is a list of { label, value,
			// primary }; `cc_email` is the company's Pipedrive BCC address, `owner_id.email` the owner's.
			source: 'Pipedrive 1 Person Get Many',
			item: {
				id: 12,
				name: 'Frances Allen',
				first_name: 'Frances',
				last_name: 'Allen',
				email: [
					{ label: 'home', value: 'fran.home@customer.test', primary: false },
					{ label: 'work', value: 'frances@customer.test', primary: true },
				],
				cc_email: 'acme@pipedrivemail.com',
				owner_id: { id: 1, name: 'Owner', email: 'owner@acme.test', value: 1 },
			},
			profile: { email: 'frances@customer.test', firstName: 'Frances', lastName: 'Allen' },
		},
		{
			// Pipedrive/v2/actions/person/getAll.operation.ts and __schema__/v2.0.0/person/getAll.json:
			// `emails`, one entry.
			source: 'Pipedrive 2 Person Get Many',
			item: {
				id: 13,
				name: 'Barbara Liskov',
				first_name: 'Barbara',
				last_name: 'Liskov',
				emails: [{ value: 'barbara@customer.test', primary: true, label: 'work' }],
				owner_id: 1,
			},
			profile: { email: 'barbara@customer.test', firstName: 'Barbara', lastName: 'Liskov' },
		},
		{
			// Zoho/__schema__/v1.0.0/contact/getAll.json (and Zoho CRM's Contacts fields): the
			// owner's address in Owner.email, a second address in Secondary_Email.
			source: 'Zoho CRM Contact Get Many',
			item: {
				id: '4150868000000224005',
				Owner: { name: 'Owner', id: '4150868000000225013', email: 'owner@acme.test' },
				Email: 'john@customer.test',
				Secondary_Email: 'john.other@customer.test',
				First_Name: 'John',
				Last_Name: 'Backus',
				Full_Name: 'John Backus',
				Account_Name: { id: '4150868000000224001', name: 'Acme' },
			},
			profile: { email: 'john@customer.test', firstName: 'John', lastName: 'Backus' },
		},
		{
			// Salesforce/Salesforce.node.ts contact getAll (SOQL records: attributes plus the fields
			// asked for) and Salesforce/__schema__/v1.0.0/lead/getAll.json.
			source: 'Salesforce Contact Get Many',
			item: {
				attributes: { type: 'Contact', url: '/services/data/v59.0/sobjects/Contact/0031' },
				Id: '0031',
				Email: 'ken@customer.test',
				FirstName: 'Ken',
				LastName: 'Thompson',
			},
			profile: { email: 'ken@customer.test', firstName: 'Ken', lastName: 'Thompson' },
		},
		{
			// ActiveCampaign/__schema__/v1.0.0/contact/getAll.json: email_domain and email_local are
			// parts of the address, not addresses.
			source: 'ActiveCampaign Contact Get Many',
			item: {
				id: '3',
				email: 'margaret@customer.test',
				email_domain: 'customer.test',
				email_local: 'margaret',
				firstName: 'Margaret',
				lastName: 'Hamilton',
				phone: '',
			},
			profile: { email: 'margaret@customer.test', firstName: 'Margaret', lastName: 'Hamilton' },
		},
		{
			// Stripe/Stripe.node.ts customer getAll (Stripe's customer object): one full `name`,
			// which is never split.
			source: 'Stripe Customer Get Many',
			item: {
				id: 'cus_1',
				object: 'customer',
				email: 'jenny@customer.test',
				name: 'Jenny Rosen',
				shipping: { name: 'Jenny Rosen', address: { city: 'Berlin' } },
				metadata: {},
			},
			profile: { email: 'jenny@customer.test' },
		},
		{
			// WooCommerce/__schema__/v1.0.0/customer/getAll.json: billing.email may be someone else's.
			source: 'WooCommerce Customer Get Many',
			item: {
				id: 25,
				email: 'linus@customer.test',
				first_name: 'Linus',
				last_name: 'Torvalds',
				username: 'linus',
				billing: { first_name: 'Acme', last_name: 'Accounts', email: 'accounts@acme.test' },
				shipping: { first_name: 'Linus', last_name: 'Torvalds' },
			},
			profile: { email: 'linus@customer.test', firstName: 'Linus', lastName: 'Torvalds' },
		},
		{
			// Shopify/Shopify.node.ts order getAll (Shopify's order object): the names are only in
			// `customer` and the addresses, which are not read.
			source: 'Shopify Order Get Many',
			item: {
				id: 450789469,
				email: 'bob@customer.test',
				customer: {
					email: 'bob@customer.test',
					first_name: 'Bob',
					last_name: 'Norman',
					default_address: { first_name: 'Bob' },
				},
				billing_address: { first_name: 'Bob', last_name: 'Norman' },
			},
			profile: { email: 'bob@customer.test' },
		},
		{
			// Notion/shared/GenericFunctions.ts simplifyObjects: a database page's properties as
			// property_<snake_case name>, the title as `name` (a full name: not split).
			source: 'Notion Database Page Get Many (simplified)',
			item: {
				id: 'p1',
				name: 'Hedy Lamarr',
				url: 'https://www.notion.so/p1',
				property_name: 'Hedy Lamarr',
				property_email: 'hedy@customer.test',
				property_first_name: 'Hedy',
			},
			profile: { email: 'hedy@customer.test', firstName: 'Hedy' },
		},
		{
			// Google/Sheet/v2/helpers/GoogleSheets.types.ts (ROW_NUMBER): the header row's names
			// plus row_number; a Google Forms
			// responses sheet names its column "Email Address".
			source: 'Google Sheets (Google Forms responses)',
			item: {
				row_number: 2,
				Timestamp: '1/5/2026 10:00:00',
				'Email Address': 'radia@customer.test',
				'First name': 'Radia',
			},
			profile: { email: 'radia@customer.test', firstName: 'Radia' },
		},
		{
			// Form/utils/utils.ts addFormResponseDataToReturnItem: one key per field label, plus
			// submittedAt and formMode.
			source: 'n8n Form Trigger',
			item: {
				Email: 'tim@customer.test',
				Name: 'Tim Berners-Lee',
				submittedAt: '2026-01-05T10:00:00.000+00:00',
				formMode: 'production',
			},
			profile: { email: 'tim@customer.test' },
		},
		{
			// Postgres/v2 and MySql/v2 Select (MySql/__schema__/v2.5.0/database/select.json): one key
			// per column.
			source: 'Postgres / MySQL Select',
			item: {
				id: 1,
				email: 'donald@customer.test',
				first_name: 'Donald',
				last_name: 'Knuth',
				created_at: '2026-01-05',
			},
			profile: { email: 'donald@customer.test', firstName: 'Donald', lastName: 'Knuth' },
		},
		{
			// Google/Contacts/GoogleContacts.node.ts with Raw Data on: the People API's person, each
			// field a list whose primary entry is marked in its metadata.
			source: 'Google Contacts Get Many (raw data)',
			item: {
				resourceName: 'people/c1',
				names: [
					{
						metadata: { primary: true, source: { type: 'CONTACT' } },
						displayName: 'Katherine Johnson',
						familyName: 'Johnson',
						givenName: 'Katherine',
					},
					{ metadata: { source: { type: 'PROFILE' } }, displayName: 'Kat J', givenName: 'Kat' },
				],
				emailAddresses: [
					{
						metadata: { primary: true, source: { type: 'CONTACT' } },
						value: 'katherine@customer.test',
						type: 'work',
					},
					{ metadata: { source: { type: 'CONTACT' } }, value: 'kj@customer.test', type: 'home' },
				],
			},
			profile: { email: 'katherine@customer.test', firstName: 'Katherine', lastName: 'Johnson' },
		},
		{
			// Google/Contacts/GenericFunctions.ts cleanData, the default (Raw Data off): `names` is
			// the first name entry, `emailAddresses` the addresses by their type.
			source: 'Google Contacts Get Many (simplified)',
			item: {
				resourceName: 'people/c2',
				etag: '%EgUBAi43PRoEAQIFByIMR',
				names: {
					displayName: 'Christine Darden',
					familyName: 'Darden',
					givenName: 'Christine',
					displayNameLastFirst: 'Darden, Christine',
					unstructuredName: 'Christine Darden',
				},
				emailAddresses: { work: ['christine@customer.test'] },
				phoneNumbers: { mobile: ['+1 555 0100'] },
			},
			profile: { email: 'christine@customer.test', firstName: 'Christine', lastName: 'Darden' },
		},
		// CSV exports read by Extract From File: one key per header of the published format.
		{
			source: 'Google Contacts CSV export',
			item: {
				'First Name': 'Annie',
				'Middle Name': '',
				'Last Name': 'Easley',
				'E-mail 1 - Label': '* Home',
				'E-mail 1 - Value': 'annie@customer.test',
				'E-mail 2 - Label': 'Work',
				'E-mail 2 - Value': 'annie.work@customer.test',
			},
			profile: { email: 'annie@customer.test', firstName: 'Annie', lastName: 'Easley' },
		},
		{
			source: 'Google Contacts CSV export (older format)',
			item: {
				Name: 'Mary Jackson',
				'Given Name': 'Mary',
				'Family Name': 'Jackson',
				'E-mail 1 - Type': '* Home',
				'E-mail 1 - Value': 'mary@customer.test',
			},
			profile: { email: 'mary@customer.test', firstName: 'Mary', lastName: 'Jackson' },
		},
		{
			source: 'Outlook CSV export',
			item: {
				'First Name': 'Dorothy',
				'Last Name': 'Vaughan',
				'Given Yomi': '',
				'Surname Yomi': '',
				'E-mail Address': 'dorothy@customer.test',
				'E-mail 2 Address': 'dv@customer.test',
				'E-mail Display Name': 'Dorothy Vaughan (dorothy@customer.test)',
			},
			profile: { email: 'dorothy@customer.test', firstName: 'Dorothy', lastName: 'Vaughan' },
		},
		{
			source: 'Mailchimp audience CSV export',
			item: {
				'Email Address': 'evelyn@customer.test',
				'First Name': 'Evelyn',
				'Last Name': 'Boyd',
				Address: '',
				'Phone Number': '',
				MEMBER_RATING: '2',
			},
			profile: { email: 'evelyn@customer.test', firstName: 'Evelyn', lastName: 'Boyd' },
		},
		{
			source: 'HubSpot contacts CSV export',
			item: {
				'Record ID': '151',
				'First Name': 'Joan',
				'Last Name': 'Clarke',
				Email: 'joan@customer.test',
				'Contact owner': 'Owner',
			},
			profile: { email: 'joan@customer.test', firstName: 'Joan', lastName: 'Clarke' },
		},
		{
			source: 'LinkedIn Connections.csv',
			item: {
				'First Name': 'Sophie',
				'Last Name': 'Wilson',
				URL: 'https://www.linkedin.com/in/sw',
				'Email Address': 'sophie@customer.test',
				Company: 'Acme',
				Position: 'CTO',
				'Connected On': '05 Jan 2026',
			},
			profile: { email: 'sophie@customer.test', firstName: 'Sophie', lastName: 'Wilson' },
		},
	];

	test('each source maps to its contact: one wrapper level, whole-name aliases, unambiguous unwrapping', async () => {
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items: mapped.map(({ item }) => item),
			onError: 'continueErrorOutput',
		});

		expect(result.errors.map((item) => item.json)).toEqual([]);
		expect(sentProfiles().map((profile, index) => [mapped[index]?.source, profile])).toEqual(
			mapped.map(({ source, profile }) => [source, profile]),
		);
		expectEachInputExactlyOnce(result, mapped.length);
	});

	test("traps: someone else's address is never taken, nor part of a name, nor anything deeper than one wrapper", async () => {
		const items = [
			// A referral form (n8n Form Trigger, one key per field label: Form/utils/utils.ts).
			{
				'Your Email': 'me@customer.test',
				'Their Email': 'friend@customer.test',
				'Your Name': 'Me',
			},
			{
				cc_email: 'acme@pipedrivemail.com',
				Secondary_Email: 'second@customer.test',
				'Owner.email': 'owner@acme.test',
				owner_id: { email: 'owner@acme.test' },
				billing: { email: 'accounts@acme.test' },
				default_address: { email: 'home@customer.test' },
				customer: { email: 'buyer@customer.test' },
			},
			// Two levels down, and a wrapper that is a list: neither is read.
			{
				fields: { properties: { email: 'deep@customer.test' } },
				properties: [{ email: 'x@customer.test' }],
			},
		];
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items,
			onError: 'continueErrorOutput',
		});

		expect(sentProfiles()).toEqual([]);
		expect(result.errors.map((item) => item.json.error)).toEqual(
			items.map(() => 'This item has no email field for Map Automatically'),
		);
		const [referral, others, deep] = result.errors.map((item) => item.json.details.description);
		expect(referral).toContain('"Your Email", "Their Email", "Your Name"');
		expect(others).toContain('"cc_email", "Secondary_Email", "Owner.email", "owner_id"');
		expect(deep).toContain('Under "fields": "properties".');
		for (const description of [referral, others, deep]) {
			expect(description).toContain('Map Each Field Manually');
		}
		expectEachInputExactlyOnce(result, items.length);
	});

	test('top-level fields first: a wrapper is read only for a field the top level lacks', async () => {
		await runNode(sandbox, {
			parameters: automatic(),
			items: [
				{
					email: 'top@customer.test',
					properties: { email: 'inner@customer.test', firstname: 'Inner' },
				},
				{
					email: 'top2@customer.test',
					first_name: 'Top',
					merge_fields: { FNAME: 'Inner', LNAME: 'Last' },
				},
			],
		});
		expect(sentProfiles()).toEqual([
			{ email: 'top@customer.test', firstName: 'Inner' },
			{ email: 'top2@customer.test', firstName: 'Top', lastName: 'Last' },
		]);
	});

	test('ambiguous values fail the item, naming the fields: two wrappers, several entries without one primary', async () => {
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items: [
				{ fields: { Email: 'a@customer.test' }, properties: { email: 'b@customer.test' } },
				{ email: [{ value: 'a@customer.test' }, { value: 'b@customer.test' }] },
				{
					emails: [
						{ value: 'a@customer.test', primary: true },
						{ value: 'b@customer.test', primary: true },
					],
				},
				// Google Contacts simplified: two addresses by type, and nothing says which is primary.
				{ emailAddresses: { home: ['a@customer.test'], work: ['b@customer.test'] } },
				// Entries that agree are one value.
				{ email: [{ value: 'same@customer.test' }, { value: 'same@customer.test' }] },
				{ email: [], Email: 'c@customer.test' },
			],
			onError: 'continueErrorOutput',
		});

		expect(sentProfiles()).toEqual([{ email: 'same@customer.test' }]);
		expect(result.errors.map((item) => [item.json.details.kind, item.json.error])).toEqual([
			[
				'invalid_input',
				'The fields "fields.Email" and "properties.email" both give the email and differ',
			],
			['invalid_input', 'The field "email" holds 2 different values and none is marked primary'],
			[
				'invalid_input',
				'The field "emails" holds 2 different values and more than one is marked primary',
			],
			[
				'invalid_input',
				'The field "emailAddresses" holds 2 different values and none is marked primary',
			],
			['invalid_input', 'The fields "email" and "Email" both give the email and differ'],
		]);
	});

	test('HubSpot Get Many without email among its properties: the error says what to change there', async () => {
		// Hubspot/V2/HubspotV2.node.ts contact getAll (GET /contacts/v1/lists/all/contacts/all):
		// a contact has only the properties asked for (Hubspot/V2/ContactDescription.ts).
		const result = await runNode(sandbox, {
			parameters: automatic(),
			items: [
				{
					vid: 51,
					'portal-id': 62515,
					properties: {
						firstname: { value: 'Codey' },
						lastname: { value: 'Huang' },
						lastmodifieddate: { value: '1484026585538' },
					},
					'identity-profiles': [
						{ vid: 51, identities: [{ type: 'EMAIL', value: 'codey@customer.test' }] },
					],
				},
				{ id: '151', properties: { hs_object_id: '151', firstname: 'Brian' } },
			],
			onError: 'continueErrorOutput',
		});

		expect(sentProfiles()).toEqual([]);
		for (const item of result.errors) {
			expect(item.json.error).toBe('This item has no email field for Map Automatically');
			expect(item.json.details.description).toContain(
				'in the HubSpot node, add email to Options > Contact Properties to Include (Get Many) or Options > Field Names or IDs (Search)',
			);
		}
		expect(result.errors[0].json.details.description).toContain(
			'Under "properties": "firstname", "lastname", "lastmodifieddate".',
		);
	});
});
