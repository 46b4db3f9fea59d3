// @ts-check
'use strict';

/**
 * n8n's next lint rules (packages/@n8n/eslint-plugin-community-nodes/src/rules in n8n-io/n8n, not
 * yet released in 0.32.0), checked on what the package ships: the built node and credential, their
 * icons and package.json (the lint reads sources whose options are built from lists it cannot
 * follow). test/package.test.js holds the codex (`valid-node-categories`),
 * `require-community-node-keyword`, the node's name and its one credential
 * (`node-class-description-name-camelcase`, `-naming`, `single-credential-per-node`).
 */

const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const [nodeFile] = packageJson.n8n.nodes;
const [credentialFile] = packageJson.n8n.credentials;

/** The one class a built file exports, named as n8n's loader expects: after the file. */
function loadClass(/** @type {string} */ file) {
	const className = path.basename(file).split('.')[0];
	const exported = require(path.join(root, file));
	return { className, instance: new exported[className]() };
}

const node = loadClass(nodeFile);
const credential = loadClass(credentialFile);
/** @type {import('n8n-workflow').INodeTypeDescription} */
const description = node.instance.description;

/** Every parameter, the options of collections and fixed collections included. @returns {import('n8n-workflow').INodeProperties[]} */
function parameters(/** @type {any[]} */ list = description.properties) {
	return list.flatMap((/** @type {any} */ entry) => [
		...(entry.type ? [entry] : []),
		...(['collection', 'fixedCollection'].includes(entry.type) ? parameters(entry.options) : []),
		...(Array.isArray(entry.values) ? parameters(entry.values) : []),
	]);
}
const choices = parameters().filter((p) => ['options', 'multiOptions'].includes(p.type));
const names = (/** @type {any} */ p) => p.options.map((/** @type {any} */ o) => o.name);

/** WCAG contrast ratio of two #rrggbb colours. */
function contrast(/** @type {string} */ a, /** @type {string} */ b) {
	const luminance = (/** @type {string} */ hex) => {
		const [r, g, b] = [1, 3, 5].map((i) => {
			const c = parseInt(hex.slice(i, i + 2), 16) / 255;
			return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
		});
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
	return (high + 0.05) / (low + 0.05);
}

/** The best contrast of an icon's fill, stroke and stop colours on a background. */
function iconContrast(/** @type {string} */ icon, /** @type {string} */ background) {
	const svg = fs.readFileSync(
		path.join(root, path.dirname(nodeFile), icon.replace('file:', '')),
		'utf8',
	);
	const colours = [...svg.matchAll(/(?:fill|stroke|stop-color)="(#[0-9a-f]{6})"/gi)].map(
		(m) => m[1],
	);
	return Math.max(...colours.map((colour) => contrast(colour, background)));
}

const sorted = (/** @type {string[]} */ list) =>
	[...list].sort((a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' }));
const duplicates = (/** @type {unknown[]} */ list) => list.filter((v, i) => list.indexOf(v) !== i);

/** @type {Array<[string, () => unknown[]]>} rule(s), and what breaks them (none when passing) */
const rules = [
	[
		'options-sorted-alphabetically: top-level options in alphabetical order',
		() =>
			description.properties
				.filter((p) => p.type === 'options')
				.filter((p) => names(p).join() !== sorted(names(p)).join())
				.map((p) => p.name),
	],
	[
		'no-duplicate-param-options, node-param-conventions: option names and values unique',
		() =>
			choices.flatMap((p) => [
				...duplicates(names(p)),
				...duplicates(p.options?.map((/** @type {any} */ o) => o.value) ?? []),
			]),
	],
	[
		'require-param-default, node-param-conventions: every parameter has a default, none says required: false',
		() =>
			parameters()
				.filter((p) => !('default' in p) || p.required === false)
				.map((p) => p.name),
	],
	[
		'hint-max-length: hints at most 120 characters, nested options too (and the walk finds them)',
		() => {
			const hints = parameters().flatMap((p) => (typeof p.hint === 'string' ? [p.hint] : []));
			return hints.length > 4 ? hints.filter((hint) => hint.length > 120) : ['no hints found'];
		},
	],
	[
		'no-asterisk-in-option-names',
		() => choices.flatMap(names).filter((name) => name.includes('*')),
	],
	[
		"node-class-description-non-core-color: not n8n's own #FF6D5A",
		() =>
			[description.defaults.color, /** @type {any} */ (description).color].filter(
				(color) => typeof color === 'string' && color.toUpperCase() === '#FF6D5A',
			),
	],
	[
		'node-filename-against-convention, node-file-conventions: file named after the class and the name',
		() => {
			const expected = description.name[0].toUpperCase() + description.name.slice(1);
			return path.basename(nodeFile) === `${expected}.node.js` && node.className === expected
				? []
				: [nodeFile];
		},
	],
	[
		'cred-class-name-suffix, cred-class-naming, cred-filename-against-convention: class ...Api, file after it',
		() =>
			credential.className.endsWith('Api') &&
			path.basename(credentialFile) === `${credential.className}.credentials.js` &&
			credential.instance.constructor.name === credential.className
				? []
				: [credentialFile],
	],
	[
		'cred-class-name-field-conventions, cred-class-field-naming: name camelCase ...Api, displayName with "API"',
		() => {
			const { name, displayName } = credential.instance;
			return [
				...(/^[a-z]\w*Api$/.test(name) ? [] : [name]),
				...(/^[A-Z]/.test(displayName) && /\bAPI\b/.test(displayName) ? [] : [displayName]),
			];
		},
	],
	[
		'icon-contrast: each icon at least 1.5:1 on its theme background (white, #2b2b2b)',
		() => {
			const { light, dark } = /** @type {{ light: string, dark: string }} */ (description.icon);
			return [
				[light, '#FFFFFF'],
				[dark, '#2B2B2B'],
			].filter(([icon, background]) => iconContrast(icon, background) < 1.5);
		},
	],
	[
		'require-mit-license, community-package-json: MIT, version, description, author (the n8n section: test/package.test.js)',
		() => {
			const { license, version, description: about, author, repository } = packageJson;
			return Object.entries({
				license: license === 'MIT',
				version: /^\d+\.\d+\.\d+/.test(version),
				description: Boolean(about),
				author: Boolean(author?.name),
				repository: !/github\.com\/<\.\.\.>/.test(repository?.url ?? ''),
			})
				.filter(([, ok]) => !ok)
				.map(([field]) => field);
		},
	],
	[
		'no-monorepo: no repository.directory',
		() => (packageJson.repository?.directory ? [packageJson.repository] : []),
	],
	[
		'no-hardcoded-ids: no fixed partner, account, tenant, customer or client ID in the node',
		() => {
			const dir = path.join(root, path.dirname(nodeFile));
			const source = fs
				.readdirSync(dir, { recursive: true, encoding: 'utf8' })
				.filter((file) => file.endsWith('.js'))
				.map((file) => fs.readFileSync(path.join(dir, file), 'utf8'))
				.join('\n');
			return [
				...source.matchAll(
					/\b(?:partner|affiliate|reseller|account|tenant|customer|client)_?id['"]?\s*[:=]\s*['"][^'"]+['"]/gi,
				),
			].map((m) => m[0]);
		},
	],
];

test.each(rules)('%s', (_rule, breaks) => {
	expect(breaks()).toEqual([]);
});
