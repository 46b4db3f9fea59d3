/**
 * Checks of the credential made in node runs (readSettings) and in n8n's credential test
 * (the credential's `authenticate`), so both say the same. No message holds the key or a
 * password: a problem is named, never shown.
 */

import type { FailureFields } from './failure';

export const DEFAULT_BASE_URL = 'https://api.basicsengage.com/api/v0/dev';

/** What a 404 most often means: a Base URL without the API's path. */
export const BASE_URL_PATH_HINT = `check the Base URL in the credential: it must include the API's path, like ${DEFAULT_BASE_URL}`;

/** What is wrong, and in `description` what to do about it. */
export type CredentialProblem = Pick<FailureFields, 'message' | 'description'>;

/** Visible ASCII only: what an API key can be while staying one HTTP header value. */
const HEADER_SAFE = /^[!-~]+$/;

export function normalizeBaseUrl(baseUrl: unknown): string {
	return String(baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '');
}

/** An http(s) address with a host, or undefined. */
export function parseHttpUrl(address: string): URL | undefined {
	try {
		const url = new URL(address);
		return /^https?:$/.test(url.protocol) && url.hostname !== '' ? url : undefined;
	} catch {
		return undefined;
	}
}

/**
 * The Base URL as `new URL` reads it, or what is wrong with it, else with the key: the Base URL
 * is checked first.
 */
export function checkCredential(baseUrl: string, apiKey: string): URL | CredentialProblem {
	const url = /^https?:\/\/[!-~]+$/i.test(baseUrl) ? parseHttpUrl(baseUrl) : undefined;
	if (!url) {
		return {
			message: 'The Base URL in the credential is not valid',
			description: `It must be an http:// or https:// address without spaces, for example ${DEFAULT_BASE_URL}.`,
		};
	}
	if (url.username !== '' || url.password !== '') {
		// n8n's HTTP client turns `user:password@` into Basic auth, which replaces the Bearer key.
		return {
			message: 'The Base URL in the credential contains a user name or password (before "@")',
			description: `n8n would send them instead of the API key, so BasicsEngage would answer "Invalid API key". Remove everything between "//" and "@", for example ${DEFAULT_BASE_URL}.`,
		};
	}
	if (/^bearer\s/i.test(apiKey)) {
		return {
			message: 'The API key in the credential starts with "Bearer "',
			description: 'Paste only the key, without "Bearer ": the node adds it.',
		};
	}
	if (!HEADER_SAFE.test(apiKey)) {
		// Refuse rather than let a line break split the header or Node reject it mid-run.
		return {
			message:
				'The API key in the credential is empty or contains spaces, line breaks or non-ASCII characters',
			description: 'Paste the key again, exactly as the BasicsEngage dashboard shows it.',
		};
	}
	return url;
}
