import type { ApiFailure } from './errors';
import { invalidInput } from './errors';

// Deliberately simple: one @, no spaces, brackets or control characters, a dot in the domain.
// The API has the final word; this only catches what can never be an address, before any
// quota is spent.
const EMAIL_ADDRESS =
	/^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:".]+(\.[^\s@<>()[\]\\,;:".]+)*\.[^\s@<>()[\]\\,;:".]{2,}$/;
const CONTROL_CHARACTER = /\p{Cc}/u;

export type Checked<T> = { ok: true; value: T } | { ok: false; failure: ApiFailure };

function describe(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'a list';
	return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Reads a parameter that the API wants as text. Expressions can hand over numbers or booleans,
 * which are turned into text; objects and lists are refused rather than sent as "[object Object]".
 */
export function readText(
	value: unknown,
	label: string,
	{ required }: { required: boolean },
): Checked<string | undefined> {
	if (value === undefined || value === null || value === '') {
		return required
			? {
					ok: false,
					failure: invalidInput(`${label} is required`, `${label} is empty for this item.`),
				}
			: { ok: true, value: undefined };
	}
	if (typeof value === 'string') return { ok: true, value };
	if (typeof value === 'number' || typeof value === 'boolean')
		return { ok: true, value: String(value) };
	return {
		ok: false,
		failure: invalidInput(
			`${label} must be text, not ${describe(value)}`,
			`Map a text field to ${label}, for example {{ $json.fieldName }}.`,
		),
	};
}

export function readEmailAddress(value: unknown, label: string): Checked<string> {
	const text = readText(value, label, { required: true });
	if (!text.ok) return text;
	const address = (text.value as string).trim();
	if (!EMAIL_ADDRESS.test(address) || CONTROL_CHARACTER.test(address)) {
		return {
			ok: false,
			failure: invalidInput(
				`${label} is not a valid email address: "${address.slice(0, 100)}"`,
				`${label} must look like name@example.com. Nothing was sent for this item.`,
			),
		};
	}
	return { ok: true, value: address };
}

/**
 * Runs an item's parameter reading, turning what n8n throws (an expression that fails for
 * this item, say) into a per-item failure instead of ending the whole run.
 */
export function readItem<T>(read: () => Checked<T>): Checked<T> {
	try {
		return read();
	} catch (error) {
		const { message, description } = error as { message?: string; description?: string };
		return {
			ok: false,
			failure: invalidInput(
				message ?? 'A parameter could not be read for this item',
				description ?? 'Check the expressions in the node parameters for this item.',
			),
		};
	}
}

/**
 * Reads a list of IDs (profile or list IDs): comma-separated text as typed, or a list from an
 * expression. Each ID is trimmed and empty ones are dropped; anything that is not text is
 * refused, so an object is never sent as "[object Object]" and a number is not taken for an ID.
 */
export function readIdList(value: unknown, label: string): Checked<string[]> {
	if (value === undefined || value === null || value === '') return { ok: true, value: [] };
	const parts = typeof value === 'string' ? value.split(',') : value;
	if (!Array.isArray(parts)) {
		return {
			ok: false,
			failure: invalidInput(
				`${label} must be text or a list of texts, not ${describe(value)}`,
				`Type the IDs separated by commas, or map a list of IDs, for example {{ $json.ids }}.`,
			),
		};
	}
	const ids: string[] = [];
	for (const [index, part] of parts.entries()) {
		if (typeof part !== 'string') {
			return {
				ok: false,
				failure: invalidInput(
					`${label} must hold only texts, but entry ${index + 1} is ${describe(part)}`,
					`Map a list of ID texts to ${label}.`,
				),
			};
		}
		const id = part.trim();
		if (id !== '') ids.push(id);
	}
	return { ok: true, value: ids };
}

/** Text that must not be blank, trimmed: an ID, or a name the API refuses when blank. */
export function readTrimmed(value: unknown, label: string): Checked<string> {
	const text = readText(value, label, { required: true });
	if (!text.ok) return text;
	const id = (text.value as string).trim();
	return id === ''
		? {
				ok: false,
				failure: invalidInput(`${label} is required`, `${label} is empty for this item.`),
			}
		: { ok: true, value: id };
}
