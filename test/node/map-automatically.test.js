// @ts-check
'use strict';

/**
 * Add Profiles' Mapping Mode "Map Automatically" (`autoMapInputData`): the email, first name and
 * last name come from each item's own fields, matched by their whole name after lower-casing and
 * dropping spaces and punctuation (the rule, and real shapes: test/unit/auto-map.test.js), with
 * no expression evaluated per item. "Map Each Field Manually"
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

test('real shapes in one run: each item maps or fails alone, named, and the others are sent', async () => {
	// Shapes from n8n-nodes-base 2.41.1 (more in test/unit/auto-map.test.js): Facebook Lead Ads
	// Trigger, Calendly Trigger, Google Workspace Admin user, Pipedrive 2 person, Google Calendar
	// event, HubSpot Get Many without email among its properties.
	const items = [
		{ id: '1', data: { email: 'lead@customer.test', first_name: 'Lea', last_name: 'Dee' } },
		{ event: 'invitee.created', payload: { email: 'inv@customer.test', first_name: 'Ivy' } },
		{
			primaryEmail: 'dir@customer.test',
			emails: [{ address: 'old@customer.test' }, { address: 'dir@customer.test', primary: true }],
			recoveryEmail: 'me@home.test',
			name: { givenName: 'Dora', familyName: 'Rex' },
		},
		{ emails: [{ value: 'a@customer.test' }, { value: 'b@customer.test' }] },
		{ creator: { email: 'c@customer.test' }, organizer: { email: 'o@customer.test' } },
		{ vid: 51, properties: { firstname: { value: 'Codey' }, lastmodifieddate: { value: '1' } } },
	];
	const result = await runNode(sandbox, {
		parameters: automatic(),
		items,
		onError: 'continueErrorOutput',
	});

	expect(sentProfiles()).toEqual([
		{ email: 'lead@customer.test', firstName: 'Lea', lastName: 'Dee' },
		{ email: 'inv@customer.test', firstName: 'Ivy' },
		{ email: 'dir@customer.test', firstName: 'Dora', lastName: 'Rex' },
	]);
	expect(
		result.errors.map((item) => [item.pairedItem, item.json.details.kind, item.json.error]),
	).toEqual([
		[
			{ item: 3 },
			'invalid_input',
			'The field "emails" holds 2 different addresses and none is marked primary',
		],
		[{ item: 4 }, 'invalid_input', 'This item has no email field for Map Automatically'],
		[{ item: 5 }, 'invalid_input', 'This item has no email field for Map Automatically'],
	]);
	const [list, someoneElse, hubSpot] = result.errors.map((item) => item.json.details.description);
	expect(list).toContain('{{ $json.emails[0].value }}');
	expect(someoneElse).toContain('"creator.email", "organizer.email"');
	expect(hubSpot).toContain(
		'in the HubSpot node, add email to Options > Contact Properties to Include',
	);
	expectEachInputExactlyOnce(result, items.length);
});
