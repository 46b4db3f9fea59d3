import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import type { ApiResult, HttpAnswer, SuccessContract } from './answers';
import { networkFailure, parseRetryAfter, timeoutError, toApiResult } from './answers';
import type { RequestSettings } from './settings';
import { CREDENTIAL_TYPE } from './settings';

export type ApiPath =
	| '/email/send'
	| '/list/addProfiles'
	| '/list/create'
	| '/campaign/create'
	| '/campaign/send';

export interface ApiRequest {
	path: ApiPath;
	body: IDataObject;
	contract: SuccessContract;
}

/** The execution's Stop signal: aborted when the user stops it or its timeout ends it. */
export function stopSignal(context: IExecuteFunctions): AbortSignal | undefined {
	return context.getExecutionCancelSignal?.();
}

/**
 * Sends one request and maps every outcome to a result; it never throws. HTTP statuses are
 * handled here (`ignoreHttpStatusErrors`), which also stops n8n from re-sending a request once
 * on 401.
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
		// n8n's helper would send both auth headers again to whatever host a redirect names, and
		// turn a POST into a GET; the API never redirects, so a 3xx is reported, not followed.
		disableFollowRedirect: true,
		timeout: settings.timeout,
		// n8n 2.x adds it itself; 1.x does not, and a Stop must also end a request under way.
		abortSignal: stopSignal(context),
		skipSslCertificateValidation: settings.skipSslCertificateValidation,
		...(settings.proxy ? { proxy: settings.proxy } : {}),
	};

	let answer: HttpAnswer;
	try {
		answer = await withDeadline(
			context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_TYPE, options, {
				credentialsDecrypted: settings.credentials,
			}) as Promise<HttpAnswer>,
			settings.timeout,
		);
	} catch (error) {
		return { ok: false, failure: networkFailure(error, request.contract) };
	}
	const result = toApiResult(answer, request.contract, settings.secrets);
	if (!result.ok) {
		const retryAfterMs = parseRetryAfter(answer.headers?.['retry-after']);
		if (retryAfterMs !== undefined) result.failure.retryAfterMs = retryAfterMs;
	}
	return result;
}

/**
 * n8n's `timeout` fires only while the connection is idle, so a server that sends headers and
 * then drips the body would hold the run far longer; this bounds the whole answer. The timer is
 * an AbortSignal's: unref'd, and released as soon as the request settles (n8n-workflow's sleep
 * cannot be cancelled on n8n 1.x). The abandoned request is left to n8n's own timeout.
 */
async function withDeadline<T>(request: Promise<T>, timeoutMs: number): Promise<T> {
	const signal = AbortSignal.timeout(timeoutMs);
	let onTimeout = () => {};
	const deadline = new Promise<never>((_, reject) => {
		onTimeout = () => reject(timeoutError(timeoutMs));
		signal.addEventListener('abort', onTimeout, { once: true });
	});
	request.catch(() => {}); // settled after the deadline: nobody waits for it any more
	try {
		return await Promise.race([request, deadline]);
	} finally {
		signal.removeEventListener('abort', onTimeout);
	}
}
