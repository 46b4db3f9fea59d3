#!/usr/bin/env node
// Survey of the n8n sources whose items hold a person's email, and what Map Automatically does
// with each: `npm run build && node scripts/email-sources/survey.mjs`.
//
// Sources: every __schema__ file of the n8n-nodes-base the dev setup installs (an operation's
// output shape, one file per node version, resource and operation) that has an address field,
// and the shapes in from-code.mjs, read by hand from the code of nodes and triggers without one.
// From each shape the survey builds an item (every address distinct, lists of addresses with two
// entries, the first marked primary when the shape has a `primary` field), runs the built mapper
// on it and records the outcome. Whose address each field holds is decided here, by its path,
// apart from the mapper (see `role`): a mapped address that is not the record's own is wrong.
//
// Writes sources.json beside this script and the sources table of docs/operations.md.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { FROM_CODE } from './from-code.mjs';
import { nodesBase } from './locate.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
// `--mapper <dir>`: survey another build (a checkout with dist/) and only print its figures.
const other = process.argv.indexOf('--mapper');
const PACKAGE = other > 0 ? path.resolve(process.argv[other + 1]) : REPO;
const { dir, version } = nodesBase();
const MAPPER = path.join(PACKAGE, 'dist/nodes/BasicsEngage/actions/list/autoMap.js');
if (!fs.existsSync(MAPPER)) throw new Error(`${MAPPER} is missing: run \`npm run build\` first.`);
const { autoMapper } = createRequire(import.meta.url)(MAPPER);

const norm = (key) => key.toLowerCase().replace(/[^a-z0-9]/g, '');
/** A field that holds an address: its name ends in mail, email(s) or email address(es). */
const isAddressKey = (key) =>
	/e?mails?(address(es)?)?$/.test(norm(key)) &&
	!/^(hasoptedoutof|unsubscribedfrom|hsfullnameor|mergedfrom|mergedto|invalid|folderupload)/.test(
		norm(key),
	) &&
	!/link|send|envio|confirmation|notification|contactemails/.test(norm(key));
const NAME_KEY = /^(first|last|given|family|sur|full|display|f|l)?_?name$|^(fname|lname|surname)$/i;

/**
 * Containers that hold the record itself (a trigger's or an API's envelope, a record's fields):
 * an address inside them is the record's own. Any other container (owner, creator, assignees,
 * organizer, attendees, billing, customer, user, ...) holds someone else's.
 */
const ENVELOPES = new Set([
	'data',
	'payload',
	'body',
	'contact',
	'subscriber',
	'profile',
	'person',
	'fields',
	'properties',
	'mergefields',
	'merges',
]);
/** The record's main address: any other prefix names another address or another person. */
const OWN_KEYS = new Set([
	'email',
	'emails',
	'emailaddress',
	'emailaddresses',
	'mail',
	'primaryemail',
	'workemail',
]);
const SECOND =
	/^(secondary|second|recovery|alternate|alternative|additional|other|backup|personal|home)/;
/** Addresses that are no person's: a board's, a folder's, a group's, a mailbox's, a channel's. */
const NOT_A_PERSON = [
	[/^Google\/GSuiteAdmin\/.*\/group\//, "a group's address"],
	[/^HelpScout\/.*\/mailbox\//, "a mailbox's address"],
	[/^Microsoft\/Teams\/.*\/channel\//, "a channel's address"],
];

/**
 * Whose address sits at `segments` (object keys; '[]' for a list's entry): 'own' (the record's
 * main address), 'second' (another address of the same person: a second field, or a list entry
 * that is not the primary one) or 'other' (someone else's, or no one's in particular).
 */
function role(segments, { primary, listBesideScalar }) {
	const keys = segments.filter((segment) => segment !== '[]').map(norm);
	// The field holding the address: its own key, or the field of the { value } or list it is in.
	let at = keys.length - 1;
	if (['value', 'address', 'email'].includes(keys[at]) && at > 0 && isAddressKey(keys[at - 1]))
		at -= 1;
	if (SECOND.test(keys[at])) return 'second';
	if (!OWN_KEYS.has(keys[at])) return 'other';
	if (keys.slice(0, at).some((key) => !ENVELOPES.has(key))) return 'other';
	if (segments.includes('[]') && (listBesideScalar || !primary)) return 'second';
	return 'own';
}

/** A hand-read shape of from-code.mjs as a __schema__ file would give it. */
function toSchema(shape) {
	if (Array.isArray(shape)) return { type: 'array', items: toSchema(shape[0]) };
	if (shape && typeof shape === 'object') {
		return {
			type: 'object',
			properties: Object.fromEntries(
				Object.entries(shape).map(([key, value]) => [key, toSchema(value)]),
			),
		};
	}
	return { type: typeof shape === 'boolean' ? 'boolean' : 'string' };
}

const containsAddress = (schema) =>
	Object.entries(schema?.properties ?? {}).some(
		([key, child]) => isAddressKey(key) || containsAddress(child),
	) ||
	(schema?.type === 'array' && containsAddress(schema.items));

/** An item shaped like `schema`, every address distinct; and where each address sits. */
function build(schema) {
	const addresses = new Map();
	const names = [];
	const keys = (segments) => segments.filter((segment) => segment !== '[]');
	const value = (node, segments) => {
		const key = keys(segments).at(-1) ?? '';
		if (node?.type === 'array') {
			// Lists of addresses, or of people, get two entries: the case that needs a choice.
			const count = isAddressKey(key) || containsAddress(node.items) ? 2 : 1;
			return Array.from({ length: count }, () => value(node.items, [...segments, '[]']));
		}
		if (node?.type === 'object' || node?.properties) {
			return Object.fromEntries(
				Object.entries(node.properties ?? {}).map(([name, child]) => [
					name,
					value(child, [...segments, name]),
				]),
			);
		}
		// A field the schema saw only as null (Ghost's post `email`, Trello's card `email`) holds no address.
		if (node?.type === 'null') return null;
		if (node?.type !== 'string') return node?.type === 'boolean' ? false : 1;
		const parentKey = keys(segments).at(-2) ?? '';
		if (
			isAddressKey(key) ||
			(['value', 'address', 'email'].includes(norm(key)) && isAddressKey(parentKey))
		) {
			const address = `person${addresses.size}@survey.test`;
			addresses.set(address, { segments, key });
			return address;
		}
		if (NAME_KEY.test(key)) names.push(keys(segments).join('.'));
		return 'text';
	};
	const item = value(schema, []);
	// The first entry of each list is its primary one when the shape has a `primary` field.
	markPrimary(item);
	return { item, addresses, names };
}

function markPrimary(node) {
	if (Array.isArray(node)) {
		node.forEach((entry, index) => {
			if (entry && typeof entry === 'object' && 'primary' in entry) entry.primary = index === 0;
			markPrimary(entry);
		});
	} else if (node && typeof node === 'object') Object.values(node).forEach(markPrimary);
}

const pathOf = ({ segments }) => segments.join('.').replace(/\.\[\]/g, '[]');

function survey({ source, file, found, schema }) {
	const { item, addresses, names } = build(schema);
	if (addresses.size === 0) return undefined;
	const notAPerson = NOT_A_PERSON.find(([pattern]) => pattern.test(source))?.[1];
	const scalars = new Map();
	for (const [, { segments, key }] of addresses) {
		if (!segments.includes('[]') && OWN_KEYS.has(norm(key)))
			scalars.set(segments.slice(0, -1).join('.'), true);
	}
	const emails = [...addresses].map(([address, at]) => {
		const list = at.segments.lastIndexOf('[]');
		const holder = at.segments.slice(0, Math.max(0, list - 1)).join('.');
		const entry = list < 0 ? undefined : entryOf(item, at.segments.slice(0, list + 1), address);
		const primary = entry && typeof entry === 'object' && entry.primary === true;
		return {
			address,
			path: pathOf(at),
			role: notAPerson
				? 'not a person'
				: role(at.segments, { primary, listBesideScalar: list >= 0 && scalars.has(holder) }),
		};
	});
	let outcome;
	try {
		const profile = autoMapper([{ json: item }])(0);
		const taken = emails.find((email) => email.address === profile.email);
		outcome = {
			outcome: notAPerson ? 'not a person' : taken?.role === 'own' ? 'mapped' : 'wrong',
			email: taken?.path,
			names: [profile.firstName, profile.lastName].filter(Boolean).length,
		};
	} catch (error) {
		outcome = {
			outcome: notAPerson ? 'not a person' : 'refused',
			reason: error.message,
		};
	}
	return {
		source,
		file,
		found,
		emails: emails.map(({ path, role }) => ({ path, role })),
		names,
		...(notAPerson ? { notAPerson } : {}),
		...outcome,
	};
}

/** The entry of the list at `segments` (ending in '[]') that holds `address`. */
function entryOf(item, segments, address) {
	let lists = [item];
	for (const segment of segments) {
		lists = lists.flatMap((node) =>
			segment === '[]' ? (Array.isArray(node) ? node : []) : [node?.[segment]],
		);
	}
	return lists.find((entry) => JSON.stringify(entry).includes(address));
}

function schemaSources(dir) {
	const nodes = path.join(dir, 'dist', 'nodes');
	return fs
		.readdirSync(nodes, { recursive: true })
		.filter((file) => file.includes('__schema__') && file.endsWith('.json'))
		.sort()
		.map((file) => ({
			source: file.replace('/__schema__', '').replace(/\.json$/, ''),
			file: `nodes/${file}`,
			found: '__schema__',
			schema: JSON.parse(fs.readFileSync(path.join(nodes, file), 'utf8')),
		}));
}

const sources = [
	...schemaSources(dir),
	...FROM_CODE.map(({ source, file, how, shape }) => ({
		source,
		file,
		found: `code: ${how}`,
		schema: toSchema(shape),
	})),
]
	.map(survey)
	.filter(Boolean);
const persons = sources.filter((entry) => entry.outcome !== 'not a person');
const count = (outcome) => persons.filter((entry) => entry.outcome === outcome).length;
const figures = {
	nodesBase: version,
	schemaFiles: schemaSources(dir).length,
	found: persons.length,
	fromSchema: persons.filter((entry) => entry.found === '__schema__').length,
	fromCode: persons.filter((entry) => entry.found !== '__schema__').length,
	mapped: count('mapped'),
	refused: count('refused'),
	wrong: count('wrong'),
	notAPerson: sources.length - persons.length,
};
console.log(figures);
if (PACKAGE !== REPO) process.exit(0);
fs.writeFileSync(
	path.join(HERE, 'sources.json'),
	`${JSON.stringify({ figures, sources }, null, '\t')}\n`,
);

/** One row per node, version and resource (its operations together when they agree), as Markdown. */
function table() {
	const unique = (paths) => [...new Set(paths.map((p) => p.replace(/\[\]/g, '[]')))];
	const code = (paths, most = 4) =>
		paths.length === 0
			? '-'
			: paths
					.slice(0, most)
					.map((p) => `\`${p}\``)
					.join(', ') + (paths.length > most ? ', ...' : '');
	const outcome = (entry) => {
		if (entry.outcome === 'not a person') return `not a person: ${entry.notAPerson}`;
		if (entry.outcome !== 'refused') {
			const names = ['', ', one name', ', first and last name'][entry.names];
			return `${entry.outcome === 'mapped' ? 'mapped' : '**WRONG**'}: \`${entry.email}\`${names}`;
		}
		if (entry.reason.startsWith('This item has no email field'))
			return "refused: no address of the record's own";
		if (/holds \d+ different addresses/.test(entry.reason))
			return 'refused: a list of addresses, none primary';
		if (entry.reason.endsWith('is required')) return 'refused: its `email` is empty';
		return `refused: ${entry.reason}`;
	};
	const rows = new Map();
	for (const entry of sources) {
		const [group, operation] =
			entry.found === '__schema__'
				? [entry.source.replace(/\/[^/]+$/, ''), entry.source.split('/').at(-1)]
				: [`${entry.source} (code: \`${entry.file.replace(/^nodes\//, '')}\`)`, ''];
		const cells = [
			code(unique(entry.emails.filter((e) => e.role === 'own').map((e) => e.path))),
			code(unique(entry.emails.filter((e) => e.role !== 'own').map((e) => e.path))),
			outcome(entry),
		];
		const key = `${group}|${cells.join('|')}`;
		const row = rows.get(key) ?? { group, operations: [], cells };
		if (operation) row.operations.push(operation);
		rows.set(key, row);
	}
	return [
		'| Source | Its own address | Other addresses in the item | Outcome |',
		'|---|---|---|---|',
		...[...rows.values()].map(
			({ group, operations, cells }) =>
				`| ${group}${operations.length ? ` ${operations.join(', ')}` : ''} | ${cells.join(' | ')} |`,
		),
	].join('\n');
}

const figuresLine =
	`Found in n8n-nodes-base ${version}: **${figures.found} sources** with a person's email ` +
	`(${figures.fromSchema} of its ${figures.schemaFiles} \`__schema__\` files, ${figures.fromCode} read from code), ` +
	`**${figures.mapped} mapped, ${figures.refused} refused** with the reason below, **${figures.wrong} wrong addresses**; ` +
	`${figures.notAPerson} more hold an address that is no person's.`;
const DOC = path.join(REPO, 'docs/operations.md');
const doc = fs.readFileSync(DOC, 'utf8');
const START = '<!-- email-sources: generated by scripts/email-sources/survey.mjs -->';
const END = '<!-- /email-sources -->';
if (!doc.includes(START)) throw new Error(`docs/operations.md has no ${START} ... ${END} section`);
fs.writeFileSync(
	DOC,
	doc.replace(
		new RegExp(`${START}[\\s\\S]*${END}`),
		() => `${START}\n\n${figuresLine}\n\n${table()}\n\n${END}`,
	),
);
