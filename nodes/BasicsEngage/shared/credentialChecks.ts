/**
 * Checks of the credential made in node runs (getRequestSettings) and in n8n's credential test
 * (the credential's `authenticate`), so both say the same. No message holds the key or a
 * password: a problem is named, never shown.
 */

export const DEFAULT_BASE_URL = 'https://api.basicsengage.com/api/v0/dev';

/** What a 404 most often means: a Base URL without the API's path. */
export const BASE_URL_PATH_HINT = `check the Base URL in the credential: it must include the API's path, like ${DEFAULT_BASE_URL}`;
