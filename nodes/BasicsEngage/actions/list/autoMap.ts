import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { readEmailAddress, readOptionalText } from '../../helpers/read';
import { invalidInput } from '../../transport';

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
 * names n8n's CRM, sheet and form nodes and the usual contact exports use. Never part of a
 * name ("Your Email", "cc_email", "Owner.email" are someone else's address), never a full name.
 */
const PROFILE_FIELD_OF = new Map<string, ProfileField>([
	['email', 'email'],
	['emails', 'email'],
	['emailaddress', 'email'],
	['emailaddresses', 'email'],
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
 * Where sources put a record's own fields one level down: Airtable 2.2 and NocoDB (`fields`),
 * HubSpot (`properties`), Mailchimp (`merge_fields`), Google Contacts (`names`). Read only for a
 * field the top level lacks.
 */
const WRAPPERS = ['fields', 'properties', 'merge_fields', 'names'];

/** Google Contacts' raw `names` is a list of the contact's names, its own marked primary. */
const LIST_WRAPPER = 'names';

/** Case, spaces and punctuation dropped; Notion's simplified `property_` prefix too. */
function normalise(name: string): string {
	return name
		.replace(/^property_/, '')
		.toLowerCase()
		.replace(/[^\p{L}\p{N}]/gu, '');
}

interface Candidate {
	name: string;
	value: unknown;
}
type Found = Partial<Record<ProfileField, Candidate>>;

const isObject = (value: unknown): value is IDataObject =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

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

/**
 * A field's value out of the wrapper a source puts around it, only where that is unambiguous:
 * `{ value }` (HubSpot's contact properties), a list of one entry, or the one entry of a list
 * marked primary (Pipedrive's `email`, Google's `emailAddresses`); lists by type count as one
 * list. Anything else is left as it is, for the value's own check to refuse.
 */
function unwrap(value: unknown, name: string): unknown {
	if (isListsByType(value)) value = Object.values(value).flat();
	if (Array.isArray(value)) {
		if (value.length === 0) return undefined;
		const entry = single(value);
		if (entry !== undefined) return unwrap(entry, name);
		const primary = value.filter(isPrimary);
		const values = new Set(value.map((entry) => unwrap(entry, name)));
		if (values.size === 1) return [...values][0];
		throw invalidInput(
			`The field "${name}" holds ${value.length} different values and ${primary.length === 0 ? 'none' : 'more than one'} is marked primary`,
			'Map Automatically takes a list only when it has one entry or one primary entry: map the fields manually, for example {{ $json.emails[1].value }}.',
		);
	}
	return isObject(value) && 'value' in value ? value.value : value;
}

/** Adds the profile fields `object` gives to `found`; two that give different values fail the item. */
function collect(
	object: IDataObject,
	fieldOf: (name: string) => ProfileField | undefined,
	found: Found,
	prefix = '',
): void {
	for (const key of Object.keys(object)) {
		const field = fieldOf(key);
		if (field === undefined) continue;
		const name = prefix + key;
		const value = unwrap(object[key], name);
		const earlier = found[field];
		if (earlier && earlier.value !== value) {
			throw invalidInput(
				`The fields "${earlier.name}" and "${name}" both give the ${field} and differ`,
				'Map Automatically takes each field once: remove or rename one of them, or map the fields manually.',
			);
		}
		found[field] = { name, value };
	}
}

/**
 * Map Automatically: the profile from the item's own fields, matched by name, with no expression
 * evaluated per item (n8n's expressions are most of a large manual run's time). Top-level fields
 * first; one wrapper level down only for a field the top level lacks.
 */
export function autoMapper(items: INodeExecutionData[]): (itemIndex: number) => IDataObject {
	const known = new Map<string, ProfileField | undefined>();
	const fieldOf = (name: string) => {
		if (!known.has(name)) known.set(name, PROFILE_FIELD_OF.get(normalise(name)));
		return known.get(name);
	};
	return (itemIndex) => {
		const { json } = items[itemIndex];
		const found: Found = {};
		collect(json, fieldOf, found);
		if (!found.email || !found.firstName || !found.lastName) {
			const inner: Found = {};
			for (const wrapper of WRAPPERS) {
				const value = json[wrapper];
				const object = wrapper === LIST_WRAPPER && Array.isArray(value) ? single(value) : value;
				if (isObject(object)) collect(object, fieldOf, inner, `${wrapper}.`);
			}
			for (const field of ['email', 'firstName', 'lastName'] as const)
				found[field] ??= inner[field];
		}
		if (!found.email) throw noEmailField(json);
		return toProfile({
			email: found.email.value,
			firstName: found.firstName?.value,
			lastName: found.lastName?.value,
		});
	};
}

/** Names the fields the item has, and what to change where the source is known. */
function noEmailField(json: IDataObject) {
	const listed = (object: IDataObject) =>
		Object.keys(object)
			.slice(0, 20)
			.map((name) => `"${name}"`)
			.join(', ') || 'none';
	const seen = [
		`The item's fields: ${listed(json)}.`,
		...WRAPPERS.filter((wrapper) => isObject(json[wrapper])).map(
			(wrapper) => `Under "${wrapper}": ${listed(json[wrapper] as IDataObject)}.`,
		),
	];
	const properties = json.properties;
	const fromHubSpot = isObject(properties) && ('vid' in json || 'hs_object_id' in properties);
	return invalidInput(
		'This item has no email field for Map Automatically',
		[
			fromHubSpot
				? 'HubSpot returns only the contact properties it is asked for: in the HubSpot node, add email to Options > Contact Properties to Include (Get Many) or Options > Field Names or IDs (Search).'
				: 'Map Automatically takes a field named email, Email Address or E-mail 1 - Value (any case, spaces or punctuation), at the top level or under "fields", "properties" or "merge_fields".',
			...seen,
			'Rename the field before this node, or set Mapping Mode to Map Each Field Manually and map the email with an expression.',
		].join(' '),
	);
}
