// @ts-check
'use strict';

/**
 * Output schemas: one `__schema__/v1.0.0/<resource>/<operation>.json` per operation, shipped in
 * dist/, where n8n finds them beside the node (n8n-core's output-schema-resolver; the server
 * serves them at /schemas/<node>/<version>/<resource>/<operation>.json, see
 * test/e2e/workflows.e2e.mjs) and the editor shows an operation's output fields before its first
 * run. Each is checked against a real output: the same fields, of the same JSON types.
 */

const fs = require('node:fs');
const path = require('node:path');
const {
	PACKAGE_DIR,
	addProfilesParameters,
	contacts,
	createCampaignParameters,
	createListParameters,
	emailLinks,
	runNode,
	sendAndWaitParameters,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const sandbox = useSandbox({
	lists: [{ listId: 'lst_1', name: 'One', profiles: [{ email: 'ann@customer.test' }] }],
	campaigns: [
		{ _id: '66f1c0ffee0123456789abcd', name: 'Sale', subject: 'Sale', recepientList: ['lst_1'] },
	],
});

const SCHEMA_DIR = path.join(PACKAGE_DIR, 'dist/nodes/BasicsEngage/__schema__/v1.0.0');

/** @param {unknown} value */
const jsonType = (value) =>
	value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

test.each([
	['email', 'send', sendParameters()],
	['list', 'addProfiles', addProfilesParameters()],
	['list', 'create', createListParameters()],
	['campaign', 'create', createCampaignParameters({ recipientListIds: 'lst_1' })],
	['campaign', 'send', sendCampaignParameters()],
])(
	'%s/%s: the shipped schema names the fields of a real output, with their types',
	async (resource, operation, parameters) => {
		const schema = JSON.parse(
			fs.readFileSync(path.join(SCHEMA_DIR, resource, `${operation}.json`), 'utf8'),
		);
		const item = { ...contacts(1)[0], campaignId: '66f1c0ffee0123456789abcd' };
		const result = await runNode(sandbox, { parameters, items: [item] });

		expect(result.error).toBeUndefined();
		const { json } = result.success[0];
		expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(json).sort());
		for (const [field, value] of Object.entries(json)) {
			expect([field, jsonType(value)]).toEqual([field, schema.properties[field].type]);
		}
	},
);

test.each([
	['approval', { method: 'POST' }, { approved: true }],
	['freeText', { method: 'POST', body: { text: 'Yes' } }, { text: 'Yes' }],
])(
	'email/sendAndWait: the shipped schema names the fields of a real output after an answer (%s), with their types',
	async (responseType, request, data) => {
		const schema = JSON.parse(
			fs.readFileSync(path.join(SCHEMA_DIR, 'email', 'sendAndWait.json'), 'utf8'),
		);
		const waiting = await runNode(sandbox, {
			parameters: sendAndWaitParameters({ responseType }),
			items: contacts(1),
		});
		const [{ url }] = emailLinks(sandbox.requestsTo('/email/send')[0].body.html);
		const answer = await waiting.callWebhook({ url, ...request });

		const { json } = answer.result.success[0];
		expect(json).toEqual({ data: { ...data, respondedAt: expect.any(String) } });
		expect(Object.keys(json)).toEqual(Object.keys(schema.properties));
		for (const [field, value] of Object.entries(json.data)) {
			expect([field, jsonType(value)]).toEqual([
				field,
				schema.properties.data.properties[field].type,
			]);
		}
	},
);

test('every operation of the node has a schema, and no schema names an operation it lacks', async () => {
	const { loadPackage } = require('../harness/n8n');
	const { nodes } = await loadPackage(PACKAGE_DIR);
	const operations = nodes['n8n-nodes-basicsengage.basicsEngage'].description.properties
		.filter((/** @type {any} */ property) => property.name === 'operation')
		.flatMap((/** @type {any} */ property) =>
			property.options.map(
				(/** @type {any} */ option) =>
					`${property.displayOptions.show.resource[0]}/${option.value}`,
			),
		);
	const schemas = fs
		.readdirSync(SCHEMA_DIR)
		.flatMap((resource) =>
			fs
				.readdirSync(path.join(SCHEMA_DIR, resource))
				.map((file) => `${resource}/${file.replace(/\.json$/, '')}`),
		);
	expect(schemas.sort()).toEqual(operations.sort());
});
