import { tryToParseBoolean } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { asInputFailure, invalidInput } from './failure';
import type { Failure } from './failure';

// Deliberately simple: one @, no spaces, brackets or control characters, a dot in the domain.
// The API has the final word; this only catches what can never be an address, before any
// quota is spent.
export const EMAIL_ADDRESS =
	/^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:".]+(\.[^\s@<>()[\]\\,;:".]+)*\.[^\s@<>()[\]\\,;:".]{2,}$/;
// Control, format (zero-width, soft hyphen, BOM) and separator characters other than a space:
// invisible, or not what they seem, when pasted into an address.
const INVISIBLE_CHARACTERS = /(?! )[\p{C}\p{Z}]/gu;

// The readers below return what the API gets, or throw a Failure saying what is wrong.

export function isObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'a list';
	return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isEmpty(value: unknown): value is undefined | null | '' {
	return value === undefined || value === null || value === '';
}

function required(label: string): Failure {
	return invalidInput(`${label} is required`, `${label} is empty for this item.`);
}

/**
 * Reads a parameter that the API wants as text. Expressions can hand over numbers or booleans,
 * which are turned into text; objects and lists are refused rather than sent as "[object Object]".
 */
export function readOptionalText(value: unknown, label: string): string | undefined {
	if (isEmpty(value)) return undefined;
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	throw invalidInput(
		`${label} must be text, not ${describe(value)}`,
		`Map a text field to ${label}, for example {{ $json.fieldName }}.`,
	);
}

/** Text that must be given, sent as it is (a subject, a body). */
export function readText(value: unknown, label: string): string {
	const text = readOptionalText(value, label);
	if (text === undefined) throw required(label);
	return text;
}

/** Text that must not be blank, trimmed: an ID, or a name the API refuses when blank. */
export function readTrimmed(value: unknown, label: string): string {
	const text = readText(value, label).trim();
	if (text === '') throw required(label);
	return text;
}

export function readEmailAddress(value: unknown, label: string): string {
	const address = readText(value, label).trim();
	const invisible = address.match(INVISIBLE_CHARACTERS)?.[0];
	if (!EMAIL_ADDRESS.test(address) || invisible !== undefined) {
		throw invalidInput(
			`${label} is not a valid email address: "${showInvisible(address.slice(0, 100))}"`,
			invisible !== undefined
				? `${label} contains an invisible character, shown as ${showInvisible(invisible)}: delete it or type the address again. Nothing was sent for this item.`
				: `${label} must look like name@example.com. Nothing was sent for this item.`,
		);
	}
	return address;
}

/** Invisible characters written out as \u200b and the like, so the user can find them. */
function showInvisible(text: string): string {
	return text.replace(
		INVISIBLE_CHARACTERS,
		(character) => `\\u${(character.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
	);
}

/**
 * Reads a list of IDs (profile or list IDs): comma-separated text as typed, or a list from an
 * expression. Each ID is trimmed and empty ones are dropped; anything that is not text is
 * refused, so an object is never sent as "[object Object]" and a number is not taken for an ID.
 */
export function readIdList(value: unknown, label: string): string[] {
	if (isEmpty(value)) return [];
	const parts = typeof value === 'string' ? value.split(',') : value;
	if (!Array.isArray(parts)) {
		throw invalidInput(
			`${label} must be text or a list of texts, not ${describe(value)}`,
			`Type the IDs separated by commas, or map a list of IDs, for example {{ $json.ids }}.`,
		);
	}
	return parts
		.map((part, index) => {
			if (typeof part === 'string') return part.trim();
			throw invalidInput(
				`${label} must hold only texts, but entry ${index + 1} is ${describe(part)}`,
				`Map a list of ID texts to ${label}.`,
			);
		})
		.filter((id) => id !== '');
}

/** Reads what is read once per run (a fixed parameter): its failure fails every item. */
export function readForRun<T>(read: () => T): T {
	try {
		return read();
	} catch (error) {
		throw asInputFailure(error);
	}
}

/** A setting that cannot work: every item fails with it, naming the setting, never its value. */
export function badSetting(message: string, description: string): Failure {
	return invalidInput(message, `${description} Nothing was sent.`);
}

/** Options whose expressions are read per item by their own readers, so this leaves them as set. */
const PER_ITEM_OPTIONS = new Set(['skipAlreadySent', 'validateOnly']);

/**
 * A collection parameter read once per run, each option on its own: an expression that fails
 * there fails every item. Per-item options come back unresolved: one that fails for item 0 must
 * not fail the others.
 */
export function readOptions(context: IExecuteFunctions, name: string): IDataObject {
	const set = context.getNodeParameter(name, 0, {}, { rawExpressions: true }) as IDataObject;
	const options: IDataObject = {};
	for (const [option, raw] of Object.entries(set)) {
		try {
			options[option] = PER_ITEM_OPTIONS.has(option)
				? raw
				: context.getNodeParameter(`${name}.${option}`, 0);
		} catch (error) {
			throw badSetting(`An option could not be read`, `n8n said: ${(error as Error).message}.`);
		}
	}
	return options;
}

/**
 * Validate Only for one item. An expression (a form's or sheet's switch) may hand over "true",
 * 1 or "TRUE": n8n's own reading of a boolean decides, and anything else fails the item, since a
 * dry run taken for a real one would send.
 */
export function readValidateOnly(context: IExecuteFunctions, itemIndex: number): boolean {
	const value = context.getNodeParameter('options.validateOnly', itemIndex, false) as unknown;
	const text = typeof value === 'string' ? value.trim() : value;
	// n8n's reader takes null or [] for false: here they are as unclear as "maybe".
	if (typeof text === 'boolean' || typeof text === 'number' || (typeof text === 'string' && text)) {
		try {
			return tryToParseBoolean(text);
		} catch {
			// Unclear: refused below.
		}
	}
	throw invalidInput(
		`Validate Only must be true or false, not ${isEmpty(value) ? 'empty' : JSON.stringify(value)}`,
		'Make its expression return true, false, 1 or 0, e.g. {{ $json.dryRun ?? false }}. Nothing was sent.',
	);
}

/**
 * Reads a number option as its editor field declares it (default, minValue, maxValue, and
 * numberPrecision 0 for whole numbers). An expression may hand over anything: text that is not
 * a number, NaN or Infinity would mean endless retries or unlimited concurrency, so it is
 * refused with the range the field shows rather than silently changed.
 */
export function readNumberOption(
	options: IDataObject,
	property: INodeProperties,
	whenAbsent = property.default as number,
): number {
	const raw = options[property.name];
	if (raw === undefined || raw === null || raw === '') return whenAbsent;
	const value = typeof raw === 'string' ? Number(raw.trim()) : raw;
	const { minValue = -Infinity, maxValue = Infinity, numberPrecision } = property.typeOptions ?? {};
	const wholeNumber = numberPrecision === 0;
	const fits =
		typeof value === 'number' &&
		Number.isFinite(value) &&
		value >= minValue &&
		value <= maxValue &&
		(!wholeNumber || Number.isInteger(value));
	if (fits) return value;
	const range = Number.isFinite(maxValue)
		? `from ${minValue} to ${maxValue}`
		: `of at least ${minValue}`;
	throw badSetting(
		`${property.displayName} must be a ${wholeNumber ? 'whole number' : 'number'} ${range}`,
		`The option ${property.displayName} is ${JSON.stringify(String(raw).slice(0, 40))}. If it is an expression, make it return such a number.`,
	);
}
