import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { checkCredential, normalizeBaseUrl, parseHttpUrl } from '../helpers/credentialChecks';
import { Failure } from '../helpers/failure';
import { readTimeout, requestBatchingValues } from '../helpers/options';
import { badSetting, readNumberOption, readOptions } from '../helpers/read';
import { secretsOf } from './classify';

export const CREDENTIAL_TYPE = 'basicsEngageApi';

export type RequestSettings = Awaited<ReturnType<typeof readSettings>>;

/**
 * Reads, once per run, everything a request needs that is the same for every item: the
 * credential and the node's "Request Options". Throws a Failure before any request.
 */
export async function readSettings(context: IExecuteFunctions) {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE).catch((error: Error) => {
		throw n8nFailedReading(error)
			? new Failure({
					kind: 'credential_unavailable',
					description: `n8n said: ${error.message}. The credential itself may be fine: try again later. Nothing was sent.`,
				})
			: badSetting(
					'The BasicsEngage credential could not be read',
					`Select a BasicsEngage API credential in the node. n8n said: ${error.message}.`,
				);
	});
	const baseUrl = normalizeBaseUrl(credentials.baseUrl);
	const apiKey = String(credentials.apiKey ?? '').trim();
	const checked = checkCredential(baseUrl, apiKey);
	if (!(checked instanceof URL)) throw badSetting(checked.message, checked.description);

	const options = readOptions(context, 'requestOptions');
	const batch = ((options.batching as IDataObject | undefined)?.batch ?? {}) as IDataObject;
	const [batchSizeProperty, batchIntervalProperty] = requestBatchingValues;
	// As n8n's routing node reads them: no interval means no batching, no size means 1.
	const requestsPerBatch = readNumberOption(batch, batchSizeProperty, 1);
	const intervalMs = readNumberOption(batch, batchIntervalProperty, 0);
	return {
		baseUrl,
		// Read once per run and handed to n8n, which would otherwise fetch them for every request.
		credentials: { id: '', name: '', type: CREDENTIAL_TYPE, data: credentials },
		// The published spelling the list endpoint reads; n8n's credential adds `Authorization`.
		listAuthHeaderValue: `Bearer ${apiKey}`,
		// What must never be shown: the key, as sent and as JSON escapes it.
		secrets: secretsOf(apiKey),
		timeout: readTimeout(options),
		proxy: options.proxy ? parseProxy(String(options.proxy)) : undefined,
		skipSslCertificateValidation: options.allowUnauthorizedCerts === true,
		// n8n's batching: -1 disables it, 0 counts as 1.
		throttle:
			requestsPerBatch >= 0 && intervalMs > 0
				? { requestsPerBatch: Math.max(1, requestsPerBatch), intervalMs }
				: undefined,
	};
}

/**
 * n8n gives its errors a level: 'info' and 'warning' for a user's or a setting's problem (no
 * credential selected, one that no longer exists), which it does not report as its own failure.
 * Anything else (its database, a regex timeout on a busy instance) is n8n failing to read it.
 */
const n8nFailedReading = (error: Error & { level?: string }) =>
	error.level !== 'info' && error.level !== 'warning';

function parseProxy(proxy: string): IHttpRequestOptions['proxy'] {
	const parsed = parseHttpUrl(proxy.trim());
	if (!parsed) {
		throw badSetting(
			'The Proxy in Request Options is not valid',
			'Use the form http://host:port or http://user:password@host:port.',
		);
	}
	const protocol = parsed.protocol.replace(/:$/, '');
	const port = parsed.port ? Number(parsed.port) : protocol === 'https' ? 443 : 80;
	if (!parsed.username) return { host: parsed.hostname, port, protocol };
	try {
		decodeURIComponent(parsed.username);
		decodeURIComponent(parsed.password);
		// Still percent-encoded: n8n writes them back into a proxy URL, whose setters leave a
		// "%" as it is, and its proxy agent decodes them (a decoded "100%" would be malformed).
		const auth = { username: parsed.username, password: parsed.password };
		return { host: parsed.hostname, port, protocol, auth };
	} catch {
		// decodeURIComponent throws "URI malformed"; the value itself may be a password.
		throw badSetting(
			'The Proxy in Request Options is not valid: its user name or password has a "%" not followed by two hex digits',
			'Write a "%" in them as %25, in the form http://user:password@host:port.',
		);
	}
}
