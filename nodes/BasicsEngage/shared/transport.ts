import type {
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

export const CREDENTIAL_TYPE = 'basicsEngageApi';

/** Machine-readable failure kinds that users branch on (IF/Switch on `details.kind`). */
export type ErrorKind =
	| 'invalid_input'
	| 'invalid_request'
	| 'invalid_api_key'
	| 'quota_exceeded'
	| 'server_error'
	| 'network_error'
	| 'unexpected_response';

export interface ApiFailure {
	kind: ErrorKind;
	message: string;
	description: string;
	/** HTTP status as a string (n8n's convention for `httpCode`), null when no answer came. */
	httpCode: string | null;
	/**
	 * Whether sending again can help: `notSent` when the request provably never reached
	 * BasicsEngage (connection refused, DNS failure), `maybeSent` when it may have taken effect
	 * (5xx, dropped connection, timeout). Absent: retrying cannot help.
	 */
	retry?: 'notSent' | 'maybeSent';
	/** What the server's Retry-After header asked for, in ms. */
	retryAfterMs?: number;
}

export type ApiResult = { ok: true; body: IDataObject } | { ok: false; failure: ApiFailure };

/** Failures that make every later request of the run fail the same way, so none is sent. */
export const RUN_STOPPING_KINDS: ReadonlySet<ErrorKind> = new Set([
	'quota_exceeded',
	'invalid_api_key',
]);

// n8n-workflow's `failure.cause` tells n8n (and AI agents) why a node failed.
const FAILURE_CAUSES: Partial<Record<ErrorKind, string>> = {
	quota_exceeded: 'quota-exhausted',
	invalid_api_key: 'credential-invalid',
	invalid_request: 'configuration-invalid',
	invalid_input: 'configuration-invalid',
	server_error: 'temporarily-unavailable',
};

const KIND_MESSAGES: Record<ErrorKind, string> = {
	invalid_input: 'Invalid input',
	invalid_request: 'BasicsEngage rejected the request',
	invalid_api_key: 'BasicsEngage rejected the API key',
	quota_exceeded: 'The daily email quota of BasicsEngage is used up',
	server_error: 'BasicsEngage had a server error',
	network_error: 'BasicsEngage could not be reached',
	unexpected_response: 'BasicsEngage answered unexpectedly',
};

// Said to the user and to an AI agent alike, so a model does not loop on a refusal that every
// further call would get too.
const STOP_TRYING: Partial<Record<ErrorKind, string>> = {
	quota_exceeded:
		'Do not try again today: BasicsEngage refuses every further email until the daily quota resets.',
	invalid_api_key:
		'Do not try again: every request fails until the API key in the credential is fixed.',
};

const MAX_EXCERPT_LENGTH = 300;

export interface RequestSettings {
	baseUrl: string;
	/** Read once per run and handed to n8n, which would otherwise fetch them for every request. */
	credentials: ICredentialsDecrypted;
	/** The published spelling the list endpoint reads; n8n's credential adds `Authorization`. */
	listAuthHeaderValue: string;
	timeout: number;
	proxy?: IHttpRequestOptions['proxy'];
	skipSslCertificateValidation: boolean;
	throttle: { requestsPerBatch: number; intervalMs: number } | undefined;
}

interface RequestOptionsParameter {
	timeout?: number;
	proxy?: string;
	allowUnauthorizedCerts?: boolean;
	batching?: { batch?: { batchSize?: number; batchInterval?: number } };
}

// n8n's routing node waits this long when the user sets no timeout; keep the same default.
const DEFAULT_TIMEOUT_MS = 300_000;

/** Visible ASCII only: what an API key can be while staying one HTTP header value. */
const HEADER_SAFE = /^[!-~]+$/;

function isHttpUrl(address: string): boolean {
	if (!/^https?:\/\/[!-~]+$/i.test(address)) return false;
	try {
		return new URL(address).hostname !== '';
	} catch {
		return false;
	}
}

export function normalizeBaseUrl(baseUrl: unknown): string {
	return String(baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '');
}

/**
 * Reads, once per run, everything a request needs that is the same for every item: the
 * credential's base URL and the "Request Options" n8n adds to every declarative node.
 */
export async function getRequestSettings(context: IExecuteFunctions): Promise<RequestSettings> {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = normalizeBaseUrl(credentials.baseUrl);
	if (!isHttpUrl(baseUrl)) {
		throw new NodeOperationError(context.getNode(), 'The Base URL in the credential is not valid', {
			description:
				'It must be an http:// or https:// address without spaces, for example https://api.basicsengage.com/api/v0/dev',
		});
	}
	const apiKey = String(credentials.apiKey ?? '').trim();
	if (!HEADER_SAFE.test(apiKey)) {
		// Refuse rather than let a line break split the header or Node reject it mid-run.
		throw new NodeOperationError(
			context.getNode(),
			'The API key in the credential is empty or contains spaces, line breaks or non-ASCII characters',
			{ description: 'Paste the key again, exactly as the BasicsEngage dashboard shows it.' },
		);
	}

	const options = context.getNodeParameter('requestOptions', 0, {}) as RequestOptionsParameter;
	const batch = options.batching?.batch;
	const intervalMs = batch?.batchInterval ?? 0;
	const requestsPerBatch = batch?.batchSize ?? -1;
	return {
		baseUrl,
		credentials: { id: '', name: '', type: CREDENTIAL_TYPE, data: credentials },
		listAuthHeaderValue: `Bearer ${apiKey}`,
		timeout: options.timeout || DEFAULT_TIMEOUT_MS,
		proxy: options.proxy ? parseProxy(context, options.proxy) : undefined,
		skipSslCertificateValidation: options.allowUnauthorizedCerts === true,
		// n8n's batching: -1 disables it, 0 counts as 1.
		throttle:
			requestsPerBatch >= 0 && intervalMs > 0
				? { requestsPerBatch: Math.max(1, requestsPerBatch), intervalMs }
				: undefined,
	};
}

function parseProxy(context: IExecuteFunctions, proxy: string): IHttpRequestOptions['proxy'] {
	let parsed: URL;
	try {
		parsed = new URL(proxy);
	} catch {
		throw new NodeOperationError(context.getNode(), 'The proxy is not valid', {
			description: 'Use the form http://host:port or http://user:password@host:port',
		});
	}
	const protocol = parsed.protocol.replace(/:$/, '');
	const port = parsed.port ? Number(parsed.port) : protocol === 'https' ? 443 : 80;
	return {
		host: parsed.hostname,
		port,
		protocol,
		...(parsed.username
			? {
					auth: {
						username: decodeURIComponent(parsed.username),
						password: decodeURIComponent(parsed.password),
					},
				}
			: {}),
	};
}

export interface ApiRequest {
	path: '/email/send' | '/list/addProfiles';
	body: IDataObject;
}

/**
 * Sends one request and maps every outcome to a result; it never throws for HTTP or network
 * failures. HTTP statuses are handled here (`ignoreHttpStatusErrors`), which also stops n8n
 * from re-sending a request once on 401.
 */
export async function apiRequest(
	context: IExecuteFunctions,
	settings: RequestSettings,
	request: ApiRequest,
): Promise<ApiResult> {
	const headers: IDataObject = { 'Content-Type': 'application/json', Accept: 'application/json' };
	if (request.path === '/list/addProfiles') {
		// Published misspelled for this endpoint; n8n's credential adds the correct spelling too,
		// so the request works against a server that reads either.
		headers.Authroization = settings.listAuthHeaderValue;
	}
	const options: IHttpRequestOptions = {
		method: 'POST',
		url: `${settings.baseUrl}${request.path}`,
		headers,
		body: request.body,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: settings.timeout,
		skipSslCertificateValidation: settings.skipSslCertificateValidation,
		...(settings.proxy ? { proxy: settings.proxy } : {}),
	};

	let response: { statusCode: number; body: unknown; headers?: IDataObject };
	try {
		response = await context.helpers.httpRequestWithAuthentication.call(
			context,
			CREDENTIAL_TYPE,
			options,
			{ credentialsDecrypted: settings.credentials },
		);
	} catch (error) {
		return { ok: false, failure: networkFailure(error) };
	}
	const result = toApiResult(response.statusCode, response.body);
	if (!result.ok) {
		const retryAfterMs = parseRetryAfter(response.headers?.['retry-after']);
		if (retryAfterMs !== undefined) result.failure.retryAfterMs = retryAfterMs;
	}
	return result;
}

/** Retry-After is either seconds or an HTTP date. */
function parseRetryAfter(header: unknown): number | undefined {
	if (typeof header !== 'string' || header.trim() === '') return undefined;
	const seconds = Number(header);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(header);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function toApiResult(statusCode: number, body: unknown): ApiResult {
	const jsonBody = typeof body === 'object' && body !== null && !Array.isArray(body);
	if (statusCode >= 200 && statusCode < 300 && jsonBody) {
		return { ok: true, body: body as IDataObject };
	}
	const kind = kindForStatus(statusCode);
	const apiText = apiErrorText(body);
	const httpCode = String(statusCode);
	if (statusCode >= 200 && statusCode < 300) {
		return {
			ok: false,
			failure: {
				kind,
				httpCode,
				message: `${KIND_MESSAGES[kind]}: the answer was not JSON`,
				description: `HTTP ${statusCode}. Body starts with: ${excerpt(body)}`,
			},
		};
	}
	return {
		ok: false,
		failure: {
			kind,
			httpCode,
			...(kind === 'server_error' ? { retry: 'maybeSent' as const } : {}),
			message: apiText
				? `${KIND_MESSAGES[kind]}: ${apiText}`
				: `${KIND_MESSAGES[kind]} (HTTP ${statusCode})`,
			description: [
				apiText
					? `HTTP ${statusCode}: ${apiText}.`
					: `HTTP ${statusCode}. Body starts with: ${excerpt(body)}`,
				STOP_TRYING[kind],
			]
				.filter(Boolean)
				.join(' '),
		},
	};
}

function kindForStatus(statusCode: number): ErrorKind {
	if (statusCode === 400) return 'invalid_request';
	if (statusCode === 401) return 'invalid_api_key';
	if (statusCode === 429) return 'quota_exceeded';
	if (statusCode >= 500 && statusCode < 600) return 'server_error';
	return 'unexpected_response';
}

/** The spec's error bodies carry their text in `error` or `message`, depending on the case. */
function apiErrorText(body: unknown): string | undefined {
	if (typeof body !== 'object' || body === null) return undefined;
	const { error, message } = body as IDataObject;
	for (const text of [error, message]) {
		if (typeof text === 'string' && text.trim() !== '') return text.trim();
	}
	return undefined;
}

function excerpt(body: unknown): string {
	const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
	const flat = text.replace(/\s+/g, ' ').trim();
	if (flat === '') return '(empty)';
	return flat.length > MAX_EXCERPT_LENGTH ? `${flat.slice(0, MAX_EXCERPT_LENGTH)}…` : flat;
}

// Errors raised before a connection exists: the request cannot have reached the server.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

function networkFailure(error: unknown): ApiFailure {
	const code = findErrorCode(error);
	const timedOut = code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(String(code));
	const reason = timedOut
		? 'the request timed out'
		: code
			? `the connection failed (${code})`
			: 'the connection failed';
	const notSent = code !== undefined && NOT_SENT_CODES.has(code);
	return {
		kind: 'network_error',
		httpCode: null,
		retry: notSent ? 'notSent' : 'maybeSent',
		message: `${KIND_MESSAGES.network_error}: ${reason}`,
		description: notSent
			? 'The request never reached BasicsEngage. Check the Base URL and the network.'
			: 'No answer came from BasicsEngage, but the request may have reached it: check before sending it again. Check also the Timeout in Request Options.',
	};
}

/**
 * n8n wraps transport errors in NodeApiError; the socket's code sits on the wrapped cause. n8n 1.x
 * drops that cause and keeps only the original messages ("connect ECONNREFUSED …", "timeout of
 * 300ms exceeded"), so the code is read from them there.
 */
function findErrorCode(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
		const { code, cause } = current as { code?: unknown; cause?: unknown };
		if (typeof code === 'string' && code !== '') return code;
		current = cause;
	}
	const { message, messages } = (error ?? {}) as { message?: unknown; messages?: unknown };
	for (const text of [...(Array.isArray(messages) ? messages : []), message]) {
		if (typeof text !== 'string') continue;
		if (/timeout of \d+ms exceeded/.test(text)) return 'ETIMEDOUT';
		const code = /\b(E[A-Z]{4,}(?:_[A-Z]+)*)\b/.exec(text)?.[1];
		if (code) return code;
	}
	return undefined;
}

export function invalidInput(message: string, description: string): ApiFailure {
	return { kind: 'invalid_input', httpCode: null, message, description };
}

/** The error n8n shows when the user chose On Error = Stop Workflow. */
export function toNodeError(
	context: IExecuteFunctions,
	failure: ApiFailure,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	const options = {
		message: failure.message,
		description: `${failure.description} (kind: ${failure.kind})`,
		itemIndex,
	};
	const error =
		failure.httpCode === null
			? new NodeOperationError(context.getNode(), failure.message, options)
			: new NodeApiError(
					context.getNode(),
					{
						message: failure.message,
						description: failure.description,
						httpCode: failure.httpCode,
					},
					{ ...options, httpCode: failure.httpCode },
				);
	// Assigned rather than passed as an option: n8n-workflow 1.x ignores the option, and a
	// plain field reaches n8n either way.
	const cause = FAILURE_CAUSES[failure.kind];
	if (cause) error.failure = { cause } as NodeApiError['failure'];
	return error;
}
