import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { Failure, tookUnclear } from '../helpers/failure';
import { waitUnlessStopped } from '../helpers/wait';
import type { ApiResult, SuccessContract } from './classify';
import { classifyAnswer, MAX_RETRY_AFTER_MS, networkFailure } from './classify';
import type { RequestSettings } from './settings';
import { CREDENTIAL_TYPE } from './settings';

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
 * Sends a request, retrying as the run's Retries allow, but never a refusal (400, 401, 429), a
 * redirect or an answer that breaks the contract, nor anything after a Stop. `unclear` is an
 * earlier try's failure after which it may have been taken: no later answer undoes it.
 */
export async function sendRequest(
	run: RunSettings,
	endpoint: Endpoint,
	body: IDataObject,
	unclear?: Failure,
): Promise<ApiResult> {
	const repeatable = repeatableOf(endpoint, body);
	let taken = unclear;
	for (let attempt = 0; ; attempt++) {
		const answer = await sendOnce(run, endpoint, body);
		const retry =
			answer instanceof Failure && attempt < run.retries && shouldRetry(answer, repeatable);
		if (retry) await waitUnlessStopped(waitBeforeRetry(answer, attempt, run), run.stopSignal);
		if (tookUnclear(answer)) taken = answer;
		if (!retry || run.stopSignal?.aborted) {
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

/**
 * Sends one request through n8n's helper and maps every outcome to a result; it never throws.
 * HTTP statuses are handled here (`ignoreHttpStatusErrors`), which also stops n8n from re-sending
 * a request once on 401.
 */
async function sendOnce(
	{ context, settings }: RunSettings,
	{ path, contract, misspelledAuthHeader }: Endpoint,
	body: IDataObject,
): Promise<ApiResult> {
	const bodyContract = typeof contract === 'function' ? contract(body) : contract;
	const options: IHttpRequestOptions = {
		method: 'POST',
		url: `${settings.baseUrl}${path}`,
		headers: {
			'Content-Type': 'application/json',
			Accept: 'application/json',
			// Published misspelled for this endpoint; n8n's credential adds the correct spelling too,
			// so the request works against a server that reads either.
			...(misspelledAuthHeader ? { Authroization: settings.listAuthHeaderValue } : {}),
		},
		body,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		// n8n's helper would send both auth headers again to whatever host a redirect names, and
		// turn a POST into a GET; the API never redirects, so a 3xx is reported, not followed.
		disableFollowRedirect: true,
		timeout: settings.timeout,
		skipSslCertificateValidation: settings.skipSslCertificateValidation,
		...(settings.proxy ? { proxy: settings.proxy } : {}),
	};
	// n8n's `timeout` fires only while the connection is idle, and n8n hands the request the
	// execution's Stop signal in place of any other: so the whole answer's deadline ends the wait
	// here, a server that sends headers and then drips the body included.
	const deadline = AbortSignal.timeout(settings.timeout);
	// Promise.race also takes the request's later failure, so nobody waits for it any more.
	return await Promise.race([
		context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_TYPE, options, {
			credentialsDecrypted: settings.credentials,
		}) as Promise<IN8nHttpFullResponse>,
		new Promise<never>((_, reject) => deadline.addEventListener('abort', reject)),
	]).then(
		(answer) => classifyAnswer(answer, bodyContract, settings.secrets),
		(error: unknown) => {
			const failed = deadline.aborted ? { code: 'ETIMEDOUT' } : error;
			return networkFailure(failed, bodyContract, settings.proxy !== undefined);
		},
	);
}

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
