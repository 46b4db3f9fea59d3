import type { IDataObject, IN8nHttpFullResponse } from 'n8n-workflow';

import { BASE_URL_PATH_HINT } from '../helpers/credentialChecks';
import type { ErrorKind, FailureFields } from '../helpers/failure';
import { Failure, KINDS } from '../helpers/failure';
import { isObject } from '../helpers/read';

/** What a request came to: the success answer's body, or why it failed. */
export type ApiResult = IDataObject | Failure;

/** What one endpoint's documented success must hold, and what may have happened otherwise. */
export interface SuccessContract {
	/** Returns what the success body lacks, or undefined when `data` is as documented. */
	check: (data: IDataObject) => string | undefined;
	/** What a request that reached BasicsEngage may have done, e.g. "the email may have been queued". */
	effect: string;
	/**
	 * The success answer is not published (Send Campaign): `status: "success"` alone is the
	 * success, with or without a `data` object, and `check` sees `data` or `{}`.
	 */
	dataOptional?: boolean;
	/** The endpoint counts toward the daily email quota, whose 429 the spec publishes (Send Email). */
	dailyQuota?: boolean;
	/** Said of a failure after which the request may have taken effect (Send Campaign's). */
	warning?: string;
}

/** A longer Retry-After than this is not waited for inside a workflow run. */
export const MAX_RETRY_AFTER_MS = 60_000;

function mayHaveTakenEffect(contract: SuccessContract): string {
	return `The request reached BasicsEngage, so ${contract.effect}: check before sending it again.`;
}

/** A failure after which the request may have taken effect, with the contract's warning. */
function maybeTookEffect({ warning, effect }: SuccessContract, fields: FailureFields): Failure {
	const { message, description } = fields;
	const warned = warning && {
		message: `${message} (${effect})`,
		description: `${description} ${warning}`,
	};
	return new Failure({ ...fields, mayHaveTakenEffect: true, ...warned });
}

/** Which refused answers may be sent again (see Failure.retry). */
type RetryOf = Partial<Record<ErrorKind, Failure['retry']>>;

/** Maps one HTTP answer to a result; only the contract's own success body is a success. */
export function classifyAnswer(
	answer: IN8nHttpFullResponse,
	contract: SuccessContract,
	secrets: readonly string[],
): ApiResult {
	const { statusCode, body } = answer;
	const httpCode = String(statusCode);
	if (statusCode >= 200 && statusCode < 300) {
		const lacks =
			!isObject(body) || body.status !== 'success'
				? 'it is not the documented success answer (status "success")'
				: isObject(body.data)
					? contract.check(body.data)
					: contract.dataOptional
						? contract.check({})
						: 'it has no "data" object';
		if (lacks === undefined) return body as IDataObject;
		return maybeTookEffect(contract, {
			kind: 'unexpected_response',
			httpCode,
			message: `${KINDS.unexpected_response.message}: HTTP ${statusCode}, but ${lacks}`,
			description: `${mayHaveTakenEffect(contract)} Answer starts with: ${showServerText(body, secrets, MAX_EXCERPT)}`,
		});
	}
	if (statusCode >= 300 && statusCode < 400) {
		// Never followed (the API does not redirect, and n8n would send the key along): the
		// first host answered, so the request may have taken effect and is never sent again.
		const target = redirectHost(answer.headers?.location, secrets);
		return maybeTookEffect(contract, {
			kind: 'unexpected_response',
			httpCode,
			message: `${KINDS.unexpected_response.message}: a redirect (HTTP ${statusCode}) to ${target}`,
			description: `The BasicsEngage API never redirects, so the redirect was not followed and the API key was not sent to ${target}. Check the Base URL. ${mayHaveTakenEffect(contract)}`,
		});
	}
	return refusal(answer, contract, secrets);
}

/** A 4xx is a refusal; a 5xx may come after the work was done. */
function refusal(
	{ statusCode, body, headers }: IN8nHttpFullResponse,
	contract: SuccessContract,
	secrets: readonly string[],
): Failure {
	const retryAfterMs = parseRetryAfter(headers?.['retry-after']);
	// The spec publishes 429 only for Send Email's daily quota; any other 429, or one asking to
	// come back within a minute, is a rate limit, which waiting ends.
	const quota = contract.dailyQuota && (retryAfterMs ?? Infinity) > MAX_RETRY_AFTER_MS;
	const kindOf: Record<number, ErrorKind> = {
		400: 'invalid_request',
		401: 'invalid_api_key',
		429: quota ? 'quota_exceeded' : 'rate_limited',
	};
	const serverError = statusCode >= 500 && statusCode < 600;
	const kind = kindOf[statusCode] ?? (serverError ? 'server_error' : 'unexpected_response');
	const apiText = apiErrorText(body);
	const serverSays = apiText
		? `HTTP ${statusCode}: ${asSentence(showServerText(apiText, secrets, MAX_ERROR_TEXT))}`
		: `HTTP ${statusCode}. Answer starts with: ${asSentence(showServerText(body, secrets, MAX_EXCERPT))}`;
	const { message, stopTrying } = KINDS[kind];
	const fields: FailureFields = {
		kind,
		httpCode: String(statusCode),
		// A 5xx may come after the work was done; a rate limit refused the request: nothing
		// happened, so it can be sent again.
		retry: ({ server_error: 'maybeSent', rate_limited: 'notSent' } as RetryOf)[kind],
		// A refusal that every further call would get leaves the server's text ("retry the next
		// day") to the description: its message says not to try again (see toNodeError).
		message:
			apiText && !stopTrying
				? `${message}: ${showServerText(apiText, secrets, MAX_EXCERPT)}`
				: `${message} (HTTP ${statusCode})`,
		description: [
			serverSays,
			statusCode === 404
				? `A Base URL without the API's path gets 404 for every request: ${BASE_URL_PATH_HINT}.`
				: undefined,
			statusCode >= 500 ? mayHaveTakenEffect(contract) : undefined,
			kind === 'rate_limited'
				? 'BasicsEngage refused the request, so nothing was sent: send it again later.'
				: undefined,
			stopTrying,
		]
			.filter(Boolean)
			.join(' '),
		retryAfterMs,
	};
	return statusCode >= 500 ? maybeTookEffect(contract, fields) : new Failure(fields);
}

/** Server text ends with its own full stop, or gets one, before the node's next sentence. */
function asSentence(text: string): string {
	return /[.!?…)]$/.test(text) ? text : `${text}.`;
}

/** The redirect's host only: its path and query may carry tokens that are not ours to show. */
function redirectHost(location: unknown, secrets: readonly string[]): string {
	if (typeof location !== 'string' || location.trim() === '') return 'an unnamed address';
	try {
		return showServerText(new URL(location).host || 'an unnamed address', secrets, 200);
	} catch {
		return 'a relative or invalid address';
	}
}

/** Retry-After is either seconds or an HTTP date. */
export function parseRetryAfter(header: unknown): number | undefined {
	if (typeof header !== 'string' || header.trim() === '') return undefined;
	const seconds = Number(header);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(header);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

// Errors raised before a connection exists: the request cannot have reached the server.
// Redirects are never followed, so such an error always concerns the Base URL (or the proxy).
// In words: n8n 2.x replaces a message holding a socket code with its own stock text.
const NOT_SENT_REASONS: Record<string, string> = {
	ECONNREFUSED: 'the connection was refused',
	ENOTFOUND: 'the host name was not found',
	EAI_AGAIN: 'the host name could not be looked up',
};

export function networkFailure(
	error: unknown,
	contract: SuccessContract,
	viaProxy = false,
): Failure {
	const code = socketErrorCode(error);
	const timedOut = code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(String(code));
	const notSent = code !== undefined && code in NOT_SENT_REASONS;
	const reason = timedOut
		? 'the request timed out'
		: notSent
			? NOT_SENT_REASONS[code]
			: 'the connection broke before the answer came';
	const fields: FailureFields = {
		kind: 'network_error',
		retry: notSent ? 'notSent' : 'maybeSent',
		message: `${KINDS.network_error.message}: ${reason}`,
		description: [
			notSent
				? 'The request never reached BasicsEngage, so nothing was sent. Check the Base URL and the network.'
				: `No full answer came from BasicsEngage, but the request may have reached it, so ${contract.effect}: check before sending it again. Check also the Timeout in Request Options.`,
			viaProxy
				? 'The request goes through the Proxy in Request Options: check it as well.'
				: undefined,
			code ? `(Error code: ${code}.)` : undefined,
		]
			.filter(Boolean)
			.join(' '),
	};
	return notSent ? new Failure(fields) : maybeTookEffect(contract, fields);
}

/**
 * n8n wraps transport errors in NodeApiError; the socket's code sits on the wrapped cause. n8n 1.x
 * drops that cause and keeps only the original messages ("connect ECONNREFUSED …", "timeout of
 * 300ms exceeded"), so the code is read from them there.
 */
function socketErrorCode(error: unknown): string | undefined {
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

/**
 * The key as sent and as it reads inside a JSON string, where `"` and `\` are escaped; never
 * empty, since readSettings refuses an empty key first.
 */
export function secretsOf(apiKey: string): string[] {
	return [...new Set([apiKey, JSON.stringify(apiKey).slice(1, -1)])];
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
 * One line of server text, redacted, as plain text, and cut. Markup as plain text: n8n's editor
 * renders an error's text as HTML and keeps links, so a tag from a server (an HTML error page, a
 * link in a 400's message) would show as one.
 */
export function showServerText(
	body: unknown,
	secrets: readonly string[],
	maxLength: number,
): string {
	const flat = redact(serialize(body), secrets)
		.replace(/<[^<>]*>/g, ' ')
		.replace(/</g, '‹')
		.replace(/>/g, '›')
		.replace(/\s+/g, ' ')
		.trim();
	return flat === '' ? '(empty)' : cut(flat, maxLength);
}

/** The spec's error bodies carry their text in `error` or `message`, depending on the case. */
export function apiErrorText(body: unknown): string | undefined {
	const { error, message } = isObject(body) ? body : {};
	const text = [error, message].find((text) => typeof text === 'string' && text.trim() !== '');
	return (text as string | undefined)?.trim();
}

/**
 * A success's output json, each value as it came from the answer: the key redacted, and as
 * text (redacted, cut) when it is longer than MAX_ERROR_TEXT once serialized or cannot be
 * serialized at all, so no answer can make an item huge, deep or a carrier of the key.
 */
export function keepServerValues(json: IDataObject, secrets: readonly string[]): IDataObject {
	return Object.fromEntries(
		Object.entries(json).map(([name, value]) => [name, keepServerValue(value, secrets)]),
	);
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
