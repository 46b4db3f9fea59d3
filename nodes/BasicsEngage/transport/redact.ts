import type { IDataObject } from 'n8n-workflow';

/**
 * Everything BasicsEngage (or a proxy in front of it) answers is untrusted: it may echo the API
 * key, be megabytes long or nested thousands of levels deep. What the node shows of it passes
 * through here: secrets redacted first, then cut, and nothing here ever throws.
 */

/** Long enough for any real error text, short enough for an error item and a log line. */
export const MAX_ERROR_TEXT = 2000;
/** An answer that is not the API's (an HTML page, a debug dump) only needs its start shown. */
export const MAX_EXCERPT = 300;
const REDACTED = '[redacted]';

/** The key as sent and as it reads inside a JSON string, where `"` and `\` are escaped. */
export function secretsOf(apiKey: string): string[] {
	return [...new Set([apiKey, JSON.stringify(apiKey).slice(1, -1)])].filter(
		(secret) => secret.length > 0,
	);
}

function redact(text: string, secrets: readonly string[]): string {
	return secrets.reduce((redacted, secret) => redacted.split(secret).join(REDACTED), text);
}

function cut(text: string, maxLength: number): string {
	if (text.length <= maxLength) return text;
	return `${text.slice(0, maxLength)}… (cut: ${text.length - maxLength} more characters)`;
}

function serialize(body: unknown): string {
	if (typeof body === 'string') return body;
	try {
		return JSON.stringify(body ?? '') ?? String(body);
	} catch {
		// Too deeply nested (or otherwise unserializable): say so rather than throw.
		return '(an answer that cannot be shown: too deeply nested)';
	}
}

/**
 * Markup as plain text: n8n's editor renders an error's text as HTML and keeps links, so a tag
 * from a server (an HTML error page, a link in a 400's message) would show as one.
 */
function plain(text: string): string {
	return text
		.replace(/<[^<>]*>/g, ' ')
		.replace(/</g, '‹')
		.replace(/>/g, '›');
}

/** One line of server text, redacted, as plain text, and cut. */
export function showServerText(
	body: unknown,
	secrets: readonly string[],
	maxLength: number,
): string {
	const flat = plain(redact(serialize(body), secrets))
		.replace(/\s+/g, ' ')
		.trim();
	return flat === '' ? '(empty)' : cut(flat, maxLength);
}

/** The spec's error bodies carry their text in `error` or `message`, depending on the case. */
export function apiErrorText(body: unknown): string | undefined {
	if (typeof body !== 'object' || body === null) return undefined;
	const { error, message } = body as IDataObject;
	for (const text of [error, message]) {
		if (typeof text === 'string' && text.trim() !== '') return text.trim();
	}
	return undefined;
}

/**
 * A success's output json, each value as it came from the answer: the key redacted, and as
 * text (redacted, cut) when it is longer than MAX_ERROR_TEXT once serialized or cannot be
 * serialized at all, so no answer can make an item huge, deep or a carrier of the key.
 */
export function keepServerValues(json: IDataObject, secrets: readonly string[]): IDataObject {
	const kept: IDataObject = {};
	for (const [name, value] of Object.entries(json)) {
		kept[name] = keepServerValue(value, secrets);
	}
	return kept;
}

function keepServerValue(value: unknown, secrets: readonly string[]): IDataObject[string] {
	if (value === undefined || value === null) return null;
	if (typeof value === 'number' || typeof value === 'boolean') return value;
	const redacted = redact(serialize(value), secrets);
	if (typeof value === 'string') return cut(redacted, MAX_ERROR_TEXT);
	if (redacted.length <= MAX_ERROR_TEXT) {
		try {
			return JSON.parse(redacted) as IDataObject[string];
		} catch {
			// The key was matched across JSON syntax; the text below is still redacted.
		}
	}
	return showServerText(redacted, secrets, MAX_ERROR_TEXT);
}
