import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import type { ApiResult, HttpAnswer, SuccessContract } from './classify';
import { classifyAnswer, networkFailure, timeoutError } from './classify';
import { Failure } from './failure';
import type { RetryPolicy } from './retries';
import { shouldRetry, waitBeforeRetry, waitUnlessStopped } from './retries';
import type { RunMemory } from './runMemory';
import type { RequestSettings } from './settings';
import { CREDENTIAL_TYPE } from './settings';

export interface ApiRequest {
	/** The endpoint, after the credential's Base URL. */
	path: string;
	body: IDataObject;
	contract: SuccessContract;
	/** Whether it may be sent again once it may have reached BasicsEngage. */
	repeatable: boolean;
	/** Also sends the header spelling the API published for this endpoint (Add Profiles). */
	misspelledAuthHeader?: boolean;
}

/** What every request of a run shares, read once per run. */
export interface RunSettings {
	context: IExecuteFunctions;
	settings: RequestSettings;
	memory: RunMemory;
	retryPolicy: RetryPolicy;
	/** The execution's Stop signal: aborted when the user stops it or its timeout ends it. */
	stopSignal: AbortSignal | undefined;
}

/**
 * Sends a request for these items unless an earlier try of this run already did (n8n's Retry On
 * Fail): a success is answered again as it was, and a failure that may have taken effect is
 * answered again too, unless the request is repeatable, and then only once more. Retries as the
 * policy allows, but never a refusal (400, 401, 429), a redirect or an answer that breaks the
 * contract, nor anything after a Stop.
 */
export async function sendRequest(
	run: RunSettings,
	request: ApiRequest,
	itemIndexes: number[],
): Promise<ApiResult> {
	const { memory, retryPolicy, stopSignal } = run;
	const answered = memory.answer(itemIndexes, request.body, request.repeatable);
	if (answered) return answered;
	for (let attempt = 0; ; attempt++) {
		const result = await sendOnce(run, request);
		const retry =
			result instanceof Failure &&
			attempt < retryPolicy.retries &&
			shouldRetry(result, request.repeatable);
		if (retry) await waitUnlessStopped(waitBeforeRetry(result, attempt, retryPolicy), stopSignal);
		if (!retry || stopSignal?.aborted) {
			memory.remember(itemIndexes, request.body, result);
			return result;
		}
	}
}

/**
 * Sends one request through n8n's helper and maps every outcome to a result; it never throws.
 * HTTP statuses are handled here (`ignoreHttpStatusErrors`), which also stops n8n from re-sending
 * a request once on 401.
 */
async function sendOnce(
	{ context, settings, stopSignal }: RunSettings,
	request: ApiRequest,
): Promise<ApiResult> {
	// The whole answer's deadline: it also aborts the request, so one that is still waiting for
	// a socket under load never reaches BasicsEngage after the item was reported.
	const deadline = AbortSignal.timeout(settings.timeout);
	const headers: IDataObject = { 'Content-Type': 'application/json', Accept: 'application/json' };
	if (request.misspelledAuthHeader) {
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
		// n8n 2.x adds the Stop signal itself; 1.x does not, and a Stop must end a request too.
		abortSignal: stopSignal ? AbortSignal.any([stopSignal, deadline]) : deadline,
		skipSslCertificateValidation: settings.skipSslCertificateValidation,
		...(settings.proxy ? { proxy: settings.proxy } : {}),
	};

	let answer: HttpAnswer;
	try {
		answer = await withDeadline(
			context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_TYPE, options, {
				credentialsDecrypted: settings.credentials,
			}) as Promise<HttpAnswer>,
			deadline,
			settings.timeout,
		);
	} catch (error) {
		return networkFailure(error, request.contract, settings.proxy !== undefined);
	}
	return classifyAnswer(answer, request.contract, settings.secrets);
}

/**
 * n8n's `timeout` fires only while the connection is idle, so a server that sends headers and
 * then drips the body would hold the run far longer; this bounds the whole answer, and says
 * "timed out" rather than the abort's "canceled". The timer is an AbortSignal's: unref'd
 * (n8n-workflow's sleep cannot be cancelled on n8n 1.x).
 */
async function withDeadline<T>(
	request: Promise<T>,
	signal: AbortSignal,
	timeoutMs: number,
): Promise<T> {
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
