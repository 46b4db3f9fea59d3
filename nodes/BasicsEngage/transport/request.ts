import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { checkCredential, normalizeBaseUrl, parseHttpUrl } from '../helpers/credentialChecks';
import { Failure, tookUnclear } from '../helpers/failure';
import { readTimeout, requestBatchingValues } from '../helpers/options';
import { badSetting, readNumberOption, readOptions } from '../helpers/read';
import { unlessAborted, waitUnlessStopped } from '../helpers/wait';
import type { ApiResult, SuccessContract } from './classify';
import { classifyAnswer, MAX_RETRY_AFTER_MS, networkFailure, secretsOf } from './classify';

export const CREDENTIAL_TYPE = 'basicsEngageApi';

/** An operation's endpoint, and what its requests are, decided by their body where they differ. */
export interface Endpoint {
	/** The endpoint, after the credential's Base URL. */
	path: string;
	/** What the documented success answer holds. */
	contract: SuccessContract | ((body: IDataObject) => SuccessContract);
	/** Whether a request may be sent again once it may have reached BasicsEngage. */
	repeatable: boolean | ((body: IDataObject) => boolean);
	/** Also sends the header spelling the API published for this endpoint (Add Profiles). */
	misspelledAuthHeader?: boolean;
}

export const repeatableOf = ({ repeatable }: Endpoint, body: IDataObject) =>
	typeof repeatable === 'function' ? repeatable(body) : repeatable;

/** What every request of a run shares, read once per run. */
export interface RunSettings {
	context: IExecuteFunctions;
	settings: RequestSettings;
	/** The Retries options: how many times, and the first wait before one. */
	retries: number;
	waitMs: number;
	/** The execution's Stop signal: aborted when the user stops it or its timeout ends it. */
	stopSignal: AbortSignal | undefined;
	/** On Error is Continue (either output): read once, by the node's `execute`. */
	continueOnFail: boolean;
}

/**
 * Sends a request through n8n's helper, retrying as the run's Retries allow, but never a refusal
 * (400, 401, 429), a redirect or an answer that breaks the contract, nor anything after a Stop.
 * Every outcome becomes a result; it never throws. `unclear` is an earlier try's failure after
 * which it may have been taken: no later answer undoes it.
 */
export async function sendRequest(
	{ context, settings, retries, waitMs, stopSignal }: RunSettings,
	endpoint: Endpoint,
	body: IDataObject,
	unclear?: Failure,
): Promise<ApiResult> {
	const { path, contract, misspelledAuthHeader } = endpoint;
	const bodyContract = typeof contract === 'function' ? contract(body) : contract;
	const repeatable = repeatableOf(endpoint, body);
	let taken = unclear;
	for (let attempt = 0; ; attempt++) {
		const options: IHttpRequestOptions = {
			...settings.request,
			url: `${settings.baseUrl}${path}`,
			// Published misspelled for this endpoint; n8n's credential adds the correct spelling too,
			// so the request works against a server that reads either.
			headers: misspelledAuthHeader
				? { ...JSON_HEADERS, Authroization: settings.listAuthHeaderValue }
				: { ...JSON_HEADERS },
			body,
		};
		// n8n's `timeout` fires only while the connection is idle, and n8n hands the request the
		// execution's Stop signal in place of any other: so the whole answer's deadline ends the
		// wait here, a server that sends headers and then drips the body included.
		const deadline = AbortSignal.timeout(settings.timeout);
		const proxied = settings.proxy !== undefined;
		const response = context.helpers.httpRequestWithAuthentication.call(
			context,
			CREDENTIAL_TYPE,
			options,
			{ credentialsDecrypted: settings.credentials },
		) as Promise<IN8nHttpFullResponse>;
		// Past the deadline nobody waits for the request any more, whatever it later comes to.
		const answer = await unlessAborted(
			response.then(
				(full) => classifyAnswer(full, bodyContract, settings.secrets),
				(error: unknown) => networkFailure(error, bodyContract, proxied),
			),
			deadline,
			() => networkFailure({ code: 'ETIMEDOUT' }, bodyContract, proxied),
		);
		const retry = answer instanceof Failure && attempt < retries && shouldRetry(answer, repeatable);
		if (retry) await waitUnlessStopped(waitBeforeRetry(answer, attempt, { waitMs }), stopSignal);
		if (tookUnclear(answer)) taken = answer;
		if (!retry || stopSignal?.aborted) {
			return taken && answer instanceof Failure ? sentAgain(taken, answer) : answer;
		}
	}
}

/** An unclear failure, whatever the request got when sent again: it may still have been taken. */
function sentAgain(unclear: Failure, last: Failure): Failure {
	if (last === unclear) return last;
	const description = `${unclear.description} Sent again: ${last.message}.`;
	return new Failure({ ...unclear.toJSON(), description });
}

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** The backoff never grows past this between two tries. */
const MAX_BACKOFF_MS = 30_000;

/** Whether to send again: never a refusal (400, 401, 429), a redirect or a broken contract. */
export function shouldRetry(failure: Failure, repeatable: boolean): boolean {
	if (failure.retry === undefined || (failure.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS) return false;
	return failure.retry === 'notSent' || repeatable;
}

/** Exponential backoff with equal jitter, unless the server said how long to wait. */
export function waitBeforeRetry(
	failure: Failure,
	attempt: number,
	policy: Pick<RunSettings, 'waitMs'>,
): number {
	if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
	const backoff = Math.min(MAX_BACKOFF_MS, policy.waitMs * 2 ** attempt);
	return backoff / 2 + Math.random() * (backoff / 2);
}

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
	const timeout = readTimeout(options);
	const proxy = options.proxy ? parseProxy(String(options.proxy)) : undefined;
	return {
		baseUrl,
		// Read once per run and handed to n8n, which would otherwise fetch them for every request.
		credentials: { id: '', name: '', type: CREDENTIAL_TYPE, data: credentials },
		// The published spelling the list endpoint reads; n8n's credential adds `Authorization`.
		listAuthHeaderValue: `Bearer ${apiKey}`,
		// What must never be shown: the key, as sent and as JSON escapes it.
		secrets: secretsOf(apiKey),
		timeout,
		proxy,
		/** What every request of the run is, but its URL, headers and body. */
		request: {
			method: 'POST',
			json: true,
			returnFullResponse: true,
			// Every status is read here, which also stops n8n from re-sending a request once on 401.
			ignoreHttpStatusErrors: true,
			// n8n's helper would send both auth headers again to whatever host a redirect names, and
			// turn a POST into a GET; the API never redirects, so a 3xx is reported, not followed.
			disableFollowRedirect: true,
			timeout,
			skipSslCertificateValidation: options.allowUnauthorizedCerts === true,
			...(proxy ? { proxy } : {}),
		} satisfies Omit<IHttpRequestOptions, 'url'>,
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
