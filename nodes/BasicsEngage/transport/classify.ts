import type { IDataObject } from 'n8n-workflow';

import { BASE_URL_PATH_HINT } from '../helpers/credentialChecks';
import { isObject } from '../helpers/read';
import { socketErrorCode } from './compat';
import type { ErrorKind } from './failure';
import { Failure, KIND_MESSAGES, RUN_STOPPING_KINDS, STOP_TRYING } from './failure';
import { apiErrorText, MAX_ERROR_TEXT, MAX_EXCERPT, showServerText } from './redact';
import { MAX_RETRY_AFTER_MS } from './retries';

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
}

export interface HttpAnswer {
	statusCode: number;
	body: unknown;
	headers?: IDataObject;
}

function mayHaveTakenEffect(contract: SuccessContract): string {
	return `The request reached BasicsEngage, so ${contract.effect}: check before sending it again.`;
}

/** Maps one HTTP answer to a result; only the contract's own success body is a success. */
export function classifyAnswer(
	answer: HttpAnswer,
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
		return new Failure({
			kind: 'unexpected_response',
			httpCode,
			mayHaveTakenEffect: true,
			message: `${KIND_MESSAGES.unexpected_response}: HTTP ${statusCode}, but ${lacks}`,
			description: `${mayHaveTakenEffect(contract)} Answer starts with: ${showServerText(body, secrets, MAX_EXCERPT)}`,
		});
	}
	if (statusCode >= 300 && statusCode < 400) {
		// Never followed (the API does not redirect, and n8n would send the key along): the
		// first host answered, so the request may have taken effect and is never sent again.
		const target = redirectHost(answer.headers?.location, secrets);
		return new Failure({
			kind: 'unexpected_response',
			httpCode,
			mayHaveTakenEffect: true,
			message: `${KIND_MESSAGES.unexpected_response}: a redirect (HTTP ${statusCode}) to ${target}`,
			description: `The BasicsEngage API never redirects, so the redirect was not followed and the API key was not sent to ${target}. Check the Base URL. ${mayHaveTakenEffect(contract)}`,
		});
	}
	const retryAfterMs = parseRetryAfter(answer.headers?.['retry-after']);
	const kind = kindForStatus(statusCode, contract, retryAfterMs);
	const apiText = apiErrorText(body);
	const serverSays = apiText
		? `HTTP ${statusCode}: ${asSentence(showServerText(apiText, secrets, MAX_ERROR_TEXT))}`
		: `HTTP ${statusCode}. Answer starts with: ${asSentence(showServerText(body, secrets, MAX_EXCERPT))}`;
	return new Failure({
		kind,
		httpCode,
		// A 4xx is a refusal; a 5xx may come after the work was done.
		mayHaveTakenEffect: statusCode >= 500,
		...(kind === 'server_error' ? { retry: 'maybeSent' as const } : {}),
		// A rate limit refused the request: nothing happened, so it can be sent again.
		...(kind === 'rate_limited' ? { retry: 'notSent' as const } : {}),
		// A refusal that every further call would get leaves the server's text ("retry the next
		// day") to the description: its message says not to try again (see messageOf).
		message:
			apiText && !RUN_STOPPING_KINDS.has(kind)
				? `${KIND_MESSAGES[kind]}: ${showServerText(apiText, secrets, MAX_EXCERPT)}`
				: `${KIND_MESSAGES[kind]} (HTTP ${statusCode})`,
		description: [
			serverSays,
			statusCode === 404
				? `A Base URL without the API's path gets 404 for every request: ${BASE_URL_PATH_HINT}.`
				: undefined,
			statusCode >= 500 ? mayHaveTakenEffect(contract) : undefined,
			kind === 'rate_limited'
				? 'BasicsEngage refused the request, so nothing was sent: send it again later.'
				: undefined,
			STOP_TRYING[kind],
		]
			.filter(Boolean)
			.join(' '),
		retryAfterMs,
	});
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

/**
 * The spec publishes 429 only for Send Email's daily quota; any other 429, or one asking to
 * come back within a minute, is a rate limit, which waiting ends.
 */
function kindForStatus(
	statusCode: number,
	contract: SuccessContract,
	retryAfterMs: number | undefined,
): ErrorKind {
	if (statusCode === 400) return 'invalid_request';
	if (statusCode === 401) return 'invalid_api_key';
	if (statusCode === 429) {
		const shortWait = retryAfterMs !== undefined && retryAfterMs <= MAX_RETRY_AFTER_MS;
		return contract.dailyQuota && !shortWait ? 'quota_exceeded' : 'rate_limited';
	}
	if (statusCode >= 500 && statusCode < 600) return 'server_error';
	return 'unexpected_response';
}

/** Retry-After is either seconds or an HTTP date. */
function parseRetryAfter(header: unknown): number | undefined {
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
	return new Failure({
		kind: 'network_error',
		httpCode: null,
		retry: notSent ? 'notSent' : 'maybeSent',
		mayHaveTakenEffect: !notSent,
		message: `${KIND_MESSAGES.network_error}: ${reason}`,
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
	});
}

/** The failure of a request that got no full answer within the Timeout of Request Options. */
export function timeoutError(timeoutMs: number): Error & { code: string } {
	return Object.assign(new Error(`timeout of ${timeoutMs}ms exceeded`), { code: 'ETIMEDOUT' });
}
