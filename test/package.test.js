// @ts-check
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { CREDENTIAL_TYPE, NODE_TYPE, PACKAGE_DIR, loadPackage } = require('./support');

const packageJson = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));

/** @param {any[]} properties @param {string} name */
const property = (properties, name) => properties.filter((candidate) => candidate.name === name);

test('package.json as n8n verifies it: n8n section on built files, strict, API version 1; names, links, keyword, the peer n8n-workflow', () => {
	expect(packageJson.n8n).toEqual({
		n8nNodesApiVersion: 1,
		strict: true,
		credentials: ['dist/credentials/BasicsEngageApi.credentials.js'],
		nodes: ['dist/nodes/BasicsEngage/BasicsEngage.node.js'],
	});
	// License, description and author name: test/verification/next-lint-rules.test.js;
	// dependencies, install scripts and engines: test/verification/pack.test.js.
	expect(packageJson).toMatchObject({
		name: 'n8n-nodes-basicsengage',
		author: { email: expect.stringMatching(/@/) },
		homepage: expect.stringMatching(/^https:\/\//),
		repository: { type: 'git', url: expect.stringMatching(/^git\+https:\/\//) },
		peerDependencies: { 'n8n-workflow': '*' },
		files: ['dist'],
	});
	expect(packageJson.keywords).toContain('n8n-community-node-package');
});

test('n8n loads the node type and its credential type; the node: name, tool use, subtitle; light and dark SVG icons, square 60x60 as n8n draws them', async () => {
	const loaded = await loadPackage(PACKAGE_DIR);
	expect(Object.keys(loaded.nodes)).toEqual([NODE_TYPE]);
	expect(Object.keys(loaded.credentials)).toEqual([CREDENTIAL_TYPE]);
	expect(loaded.credentials[CREDENTIAL_TYPE].supportedNodes).toEqual([NODE_TYPE]);
	const { description } = loaded.nodes[NODE_TYPE];
	expect(description).toMatchObject({
		name: 'basicsEngage',
		displayName: 'BasicsEngage',
		usableAsTool: true,
		credentials: [{ name: CREDENTIAL_TYPE, required: true }],
	});
	expect(description.subtitle).toContain('$parameter["operation"]');
	expect(description.iconUrl).toEqual({
		light: expect.stringMatching(/basicsEngage\.svg$/),
		dark: expect.stringMatching(/basicsEngage\.dark\.svg$/),
	});
	// That both are shipped: test/verification/pack.test.js.
	for (const icon of ['basicsEngage.svg', 'basicsEngage.dark.svg']) {
		const svg = fs.readFileSync(path.join(PACKAGE_DIR, 'nodes/BasicsEngage', icon), 'utf8');
		expect(svg).toMatch(/^<svg [^>]*width="60" height="60" viewBox="0 0 60 60"/);
	}
});

// The community node categories of n8n's next lint rule `valid-node-categories`, copied from
// packages/@n8n/eslint-plugin-community-nodes/src/rules/valid-node-categories.ts in n8n-io/n8n
// at 3320bdd2920a9e1af91c5e374d69973533771f7b (the docs' codex list; it answers "Marketing" with
// 'Use "Marketing & Content"').
const COMMUNITY_NODE_CATEGORIES = [
	'Data & Storage',
	'Finance & Accounting',
	'Marketing & Content',
	'Productivity',
	'Miscellaneous',
	'Sales',
	'Development',
	'Analytics',
	'Communication',
	'Utility',
	'AI',
];

test("codex: categories from n8n's community node list, and aliases", async () => {
	const { codex } = (await loadPackage(PACKAGE_DIR)).nodes[NODE_TYPE].description;
	expect(codex?.categories).toEqual(['Communication', 'Marketing & Content']);
	expect(
		codex?.categories?.filter(
			(/** @type {string} */ category) => !COMMUNITY_NODE_CATEGORIES.includes(category),
		),
	).toEqual([]);
	expect(codex?.subcategories).toBeUndefined();
	expect(codex?.alias).toEqual([
		'email',
		'mail',
		'newsletter',
		'transactional',
		'contact',
		'list',
		'campaign',
	]);
});

test('public contract: resources, operations and parameter names', async () => {
	const { properties } = (await loadPackage(PACKAGE_DIR)).nodes[NODE_TYPE].description;
	const resource = property(properties, 'resource')[0];
	expect(resource.options.map((/** @type {any} */ option) => option.value)).toEqual([
		'campaign',
		'email',
		'list',
	]);
	expect(resource.default).toBe('email');
	// n8n saves no parameter at its default: a saved Send Email node has no "operation".
	expect(
		property(properties, 'operation').map((/** @type {any} */ operation) => operation.default),
	).toEqual(['send', 'addProfiles', 'create']);
	const operations = property(properties, 'operation').flatMap((operation) =>
		operation.options.map(
			(/** @type {any} */ option) =>
				`${operation.displayOptions.show.resource[0]}.${option.value} (${option.name})`,
		),
	);
	expect(operations).toEqual([
		'email.send (Send)',
		'email.sendAndWait (Send and Wait for Response)',
		'list.addProfiles (Add Profiles to List)',
		'list.create (Create)',
		'campaign.create (Create)',
		'campaign.send (Send)',
	]);
	const names = new Set(properties.map((/** @type {any} */ candidate) => candidate.name));
	const published = [
		'to',
		'from',
		'subject',
		'content',
		'html',
		'text',
		'templateId',
		'templateVariablesMode',
		'templateVariables',
		'templateVariablesJson',
		'listMode',
		'listId',
		'listName',
		'listDescription',
		'email',
		'additionalFields',
		'profileIds',
		'campaignName',
		'campaignSubject',
		'contentFormat',
		'campaignHtml',
		'campaignText',
		'recipientListIds',
		'campaignId',
		'message',
		'responseType',
		'approvalOptions',
		'options',
	];
	expect([...names]).toEqual(expect.arrayContaining(published));
	expect(property(properties, 'content')[0].options.map((/** @type {any} */ o) => o.value)).toEqual(
		['html', 'text', 'template'],
	);
	expect(property(properties, 'email')[0].default).toBe('={{ $json.email }}');
	const addProfilesOptions = property(properties, 'options').find(
		(candidate) => candidate.displayOptions.show.operation[0] === 'addProfiles',
	);
	expect(addProfilesOptions.options[0]).toMatchObject({
		name: 'batchSize',
		default: 100,
		typeOptions: { minValue: 1, maxValue: 1000 },
	});
});

test('credential: password-masked key, base URL with the public default', async () => {
	const { type } = (await loadPackage(PACKAGE_DIR)).credentials[CREDENTIAL_TYPE];
	expect(
		type.properties.map((/** @type {any} */ p) => [
			p.name,
			p.typeOptions?.password === true,
			p.default,
		]),
	).toEqual([
		['apiKey', true, ''],
		['baseUrl', false, 'https://api.basicsengage.com/api/v0/dev'],
		['plainHttpNotice', false, ''],
	]);
});

test('no parameter of the node or the credential is shown, hidden or validated by a regex: n8n 2.x runs one with a 250 ms timeout on every read, and a busy n8n failed to read the credential', async () => {
	const loaded = await loadPackage(PACKAGE_DIR);
	const properties = [
		...Object.values(loaded.nodes).map((/** @type {any} */ n) => n.description.properties),
		loaded.credentials[CREDENTIAL_TYPE].type.properties,
	];
	expect(JSON.stringify(properties)).not.toMatch(/"regex"/);
});

test.each(['README.md', 'docs/errors-and-retries.md'])(
	'%s: its table of error kinds lists each kind the node gives, once',
	(file) => {
		const { KINDS } = require(path.join(PACKAGE_DIR, 'dist/nodes/BasicsEngage/helpers/failure'));
		const text = fs.readFileSync(path.join(PACKAGE_DIR, file), 'utf8');
		const rows = Array.from(text.matchAll(/^\| `([a-z_]+)` +\|/gm), (match) => match[1]);
		expect(rows.sort()).toEqual(Object.keys(KINDS).sort());
	},
);

test("index.js exports the node and credential classes from dist/, and names the same files as package.json's n8n section, which exist", () => {
	const entry = require(path.join(PACKAGE_DIR, 'index.js'));
	expect(new entry.BasicsEngage().description.name).toBe('basicsEngage');
	expect(new entry.BasicsEngageApi().name).toBe(CREDENTIAL_TYPE);
	const { nodes, credentials } = packageJson.n8n;
	expect(entry.n8n).toEqual({ nodes, credentials });
	for (const file of entry.files) expect(fs.existsSync(file)).toBe(true);
});
