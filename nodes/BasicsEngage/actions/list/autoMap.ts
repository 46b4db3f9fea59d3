import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { isObject, readEmailAddress, readOptionalText } from '../../helpers/read';
import { invalidInput } from '../../helpers/failure';

type ProfileField = 'email' | 'firstName' | 'lastName';

/** The profile as `profiles` lists it, from its fields' values, checked and trimmed. */
export function toProfile(values: Partial<Record<ProfileField, unknown>>): IDataObject {
	const profile: IDataObject = { email: readEmailAddress(values.email, 'Email') };
	for (const [field, label] of NAME_FIELDS) {
		const value = readOptionalText(values[field], label)?.trim();
		if (value) profile[field] = value;
	}
	return profile;
}

const NAME_FIELDS = [
	['firstName', 'First Name'],
	['lastName', 'Last Name'],
] as const;

/**
 * The profile field an input field gives, by its whole name normalised (see `normalise`): the
 * names n8n's nodes, triggers and the usual contact exports use (scripts/email-sources surveys
 * them). Never part of a name ("Your Email", "cc_email", "owner.email" are someone else's
 * address, "recoveryEmail" and "otherMails" another one), never a full name.
 */
const PROFILE_FIELD_OF = new Map<string, ProfileField>([
	['email', 'email'],
	['emails', 'email'],
	['emailaddress', 'email'],
	['emailaddresses', 'email'],
	// A directory's main address: Google Workspace, Affinity, Microsoft Entra ID, BambooHR.
	['primaryemail', 'email'],
	['mail', 'email'],
	['workemail', 'email'],
	// Google Contacts' CSV export: "E-mail 1 - Value" (the 2nd and 3rd are other addresses).
	['email1value', 'email'],
	['firstname', 'firstName'],
	['fname', 'firstName'],
	['givenname', 'firstName'],
	['lastname', 'lastName'],
	['lname', 'lastName'],
	['familyname', 'lastName'],
	['surname', 'lastName'],
]);

/**
 * Where a record sits one level down, read when the top level has no email: a trigger's or an
 * API's envelope (Facebook Lead Ads and Mailchimp's `data`, Calendly's `payload`, the Webhook's
 * `body`, ActiveCampaign's `contact`, Kit's `subscriber`, Okta's and Eventbrite's `profile`,
 * Notion's `person`) or a record's own fields (Airtable and NocoDB `fields`, HubSpot
 * `properties`). Any other object (owner, organizer, billing, customer, user...) is someone else.
 */
const RECORDS = new Set([
	'fields',
	'properties',
	'data',
	'payload',
	'body',
	'contact',
	'subscriber',
	'profile',
	'person',
]);

/**
 * Name objects beside a record's email: Mailchimp's `merge_fields` and `merges`, Google's
 * `names` (in raw data a list, its primary entry read) and `name`. Read for names the record lacks.
 */
const NAME_OBJECTS = new Set(['mergefields', 'merges', 'names', 'name']);

/** Case, spaces and punctuation dropped; Notion's simplified `property_` prefix too. */
function normalise(name: string): string {
	return name
		.replace(/^property_/, '')
		.toLowerCase()
		.replace(/[^\p{L}\p{N}]/gu, '');
}

/** A field's value, or the list it held when that list gives no single value. */
interface Candidate {
	name: string;
	value: unknown;
	fromList: boolean;
	list?: unknown[];
}
type Found = Partial<Record<ProfileField, Candidate>>;

const isPrimary = (entry: unknown) =>
	isObject(entry) &&
	(entry.primary === true || (isObject(entry.metadata) && entry.metadata.primary === true));

/** A list's one entry, or its one entry marked primary; undefined when there is no such entry. */
function single(list: unknown[]): unknown {
	if (list.length === 1) return list[0];
	const primary = list.filter(isPrimary);
	return primary.length === 1 ? primary[0] : undefined;
}

/** How Google Contacts' simplified output lists addresses: by type, `{ home: [...], work: [...] }`. */
const isListsByType = (value: unknown): value is Record<string, unknown[]> =>
	isObject(value) && Object.keys(value).length > 0 && Object.values(value).every(Array.isArray);

/** An entry's address: `{ value }` (HubSpot, Pipedrive, Google), `{ address }`, `{ email }`. */
const entryValue = (entry: unknown) =>
	isObject(entry) ? (entry.value ?? entry.address ?? entry.email ?? entry) : entry;

/**
 * A field's candidate, its value unwrapped only where that is unambiguous: an entry object, a
 * list of one entry, the one entry marked primary, or entries that all agree; lists by type
 * count as one list. A list that still holds several values is kept, to be refused if chosen.
 */
function candidate(name: string, raw: unknown): Candidate {
	if (typeof raw !== 'object' || raw === null) return { name, value: raw, fromList: false };
	const list = isListsByType(raw) ? Object.values(raw).flat() : raw;
	if (!Array.isArray(list)) return { name, value: entryValue(list), fromList: false };
	const entry = single(list);
	if (entry !== undefined) return { name, value: entryValue(entry), fromList: true };
	const values = new Set(list.map(entryValue));
	if (values.size <= 1) return { name, value: [...values][0], fromList: true };
	return { name, value: raw, fromList: true, list };
}

/**
 * Adds the profile fields `object` gives to `found`. A single value beside a list is the primary
 * address (Affinity's `primary_email` and `emails`); two single values or two lists that differ
 * fail the item.
 */
function collect(
	object: IDataObject,
	fieldOf: (name: string) => ProfileField | undefined,
	found: Found,
	prefix = '',
): void {
	for (const key of Object.keys(object)) {
		const field = fieldOf(key);
		if (field === undefined || object[key] === undefined) continue;
		const next = candidate(prefix + key, object[key]);
		const earlier = found[field];
		if (earlier && earlier.value !== next.value) {
			if (earlier.fromList !== next.fromList) {
				if (earlier.fromList) found[field] = next;
				continue;
			}
			throw bothGive(field, earlier, next);
		}
		found[field] = next;
	}
}

const bothGive = (field: ProfileField, one: Candidate, other: Candidate) =>
	invalidInput(
		`The fields "${one.name}" and "${other.name}" both give the ${field} and differ`,
		'Map Automatically takes each field once: remove or rename one of them, or map the fields manually.',
	);

/**
 * Map Automatically: the profile from the item's own fields, matched by name, with no expression
 * evaluated per item (n8n's expressions are most of a large manual run's time). The record is
 * the top level, else the one record object that gives an email; names come from beside its
 * email, or from its name objects.
 */
export function autoMapper(items: INodeExecutionData[]): (itemIndex: number) => IDataObject {
	const memo = <T>(of: (normalised: string) => T) => {
		const known = new Map<string, T>();
		return (name: string) => {
			if (!known.has(name)) known.set(name, of(normalise(name)));
			return known.get(name) as T;
		};
	};
	const fieldOf = memo((name) => PROFILE_FIELD_OF.get(name));
	const isRecord = memo((name) => RECORDS.has(name));
	const isNameObject = memo((name) => NAME_OBJECTS.has(name));
	const fieldsOf = (object: IDataObject, prefix = '') => {
		const found: Found = {};
		collect(object, fieldOf, found, prefix);
		return found;
	};
	return (itemIndex) => {
		const { json } = items[itemIndex];
		let found = fieldsOf(json);
		let record = json;
		let prefix = '';
		if (!found.email) {
			const inner = Object.keys(json)
				.filter((key) => isRecord(key) && isObject(json[key]))
				.map((key) => ({ key, found: fieldsOf(json[key] as IDataObject, `${key}.`) }))
				.filter((entry) => entry.found.email);
			if (inner.length === 0) throw noEmailField(json, isRecord);
			const [first] = inner;
			const other = inner.find((entry) => entry.found.email!.value !== first.found.email!.value);
			if (other) throw bothGive('email', first.found.email!, other.found.email!);
			({ found } = first);
			record = json[first.key] as IDataObject;
			prefix = `${first.key}.`;
		}
		if (!found.firstName || !found.lastName) {
			for (const key of Object.keys(record).filter(isNameObject)) {
				const value = record[key];
				const object = Array.isArray(value) ? single(value) : value;
				if (!isObject(object)) continue;
				const names = fieldsOf(object, `${prefix}${key}.`);
				found.firstName ??= names.firstName;
				found.lastName ??= names.lastName;
			}
		}
		const email = found.email!;
		if (email.list) throw severalAddresses(email.name, email.value, email.list);
		return toProfile({
			email: email.value,
			firstName: found.firstName?.value,
			lastName: found.lastName?.value,
		});
	};
}

/** `$json` followed by `path`, as an n8n expression writes it. */
const expression = (path: string[]) =>
	`{{ $json${path.map((key) => (/^\d+$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `["${key}"]`)).join('')} }}`;

/** Refuses a list of addresses that names none as primary, with an expression fitting its shape. */
function severalAddresses(name: string, value: unknown, list: unknown[]) {
	const path = name.split('.');
	if (isListsByType(value)) path.push(Object.keys(value)[0]);
	const entry = isListsByType(value) ? Object.values(value)[0][0] : list[0];
	const key = isObject(entry) ? ['value', 'address', 'email'].find((k) => k in entry) : undefined;
	const primaries = list.filter(isPrimary).length;
	return invalidInput(
		`The field "${name}" holds ${list.length} different addresses and ${primaries === 0 ? 'none' : 'more than one'} is marked primary`,
		`Map Automatically does not guess which address is the person's: set Mapping Mode to Map Each Field Manually and map the one to use, for example ${expression([...path, '0', ...(key ? [key] : [])])}.`,
	);
}

/** Names the fields the item has, the addresses it did not take, and what to change. */
function noEmailField(json: IDataObject, isRecord: (key: string) => boolean) {
	const listed = (names: string[]) =>
		names
			.slice(0, 20)
			.map((name) => `"${name}"`)
			.join(', ') || 'none';
	const looksLikeAddress = (key: string) => /e?mails?(address(es)?)?$/.test(normalise(key));
	// Addresses one level down, in an object or a list of them: an organizer's, the attendees'.
	const inside = (key: string) => {
		const value = json[key];
		const object = Array.isArray(value) ? value[0] : value;
		if (!isObject(object)) return [];
		const at = Array.isArray(value) ? `${key}[]` : key;
		return Object.keys(object)
			.filter(looksLikeAddress)
			.map((name) => `${at}.${name}`);
	};
	const notTaken = [
		...Object.keys(json).filter(looksLikeAddress),
		...Object.keys(json).flatMap(inside),
	];
	const properties = json.properties;
	const fromHubSpot = isObject(properties) && ('vid' in json || 'hs_object_id' in properties);
	return invalidInput(
		'This item has no email field for Map Automatically',
		[
			fromHubSpot
				? 'HubSpot returns only the contact properties it is asked for: in the HubSpot node, add email to Options > Contact Properties to Include (Get Many) or Options > Field Names or IDs (Search).'
				: `Map Automatically takes a field named email, Email Address, primaryEmail or mail (any case, spaces or punctuation), at the top level or under ${[...RECORDS].map((key) => `"${key}"`).join(', ')}.`,
			`The item's fields: ${listed(Object.keys(json))}.`,
			...Object.keys(json)
				.filter((key) => isRecord(key) && isObject(json[key]))
				.map((key) => `Under "${key}": ${listed(Object.keys(json[key] as IDataObject))}.`),
			...(notTaken.length
				? [`Not taken, as each may be someone else's or another address: ${listed(notTaken)}.`]
				: []),
			'Rename the field before this node, or set Mapping Mode to Map Each Field Manually and map the email with an expression.',
		].join(' '),
	);
}
