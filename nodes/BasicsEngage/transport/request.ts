import type {
	IContextObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import type { FailureFields } from '../helpers/failure';
import { Failure } from '../helpers/failure';
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
	memory: RunMemory;
	/** The Retries options: how many times, and the first wait before one. */
	retries: number;
	waitMs: number;
	/** The execution's Stop signal: aborted when the user stops it or its timeout ends it. */
	stopSignal: AbortSignal | undefined;
	/** On Error is Continue (either output): read once, by the node's `execute`. */
	continueOnFail: boolean;
}

/**
 * Sends a request for these items, which no earlier try of this run answers (the memory was
 * asked first), and remembers what it came to. Retries as the run's Retries allow, but never a
 * refusal (400, 401, 429), a redirect or an answer that breaks the contract, nor anything after
 * a Stop.
 */
export async function sendRequest(
	run: RunSettings,
	endpoint: Endpoint,
	body: IDataObject,
	itemIndexes: number[],
): Promise<ApiResult> {
	const repeatable = repeatableOf(endpoint, body);
	// An attempt, of this try or an earlier one, that may have been taken: no later answer undoes it.
	let unclear = run.memory.unclear(itemIndexes, body);
	for (let attempt = 0; ; attempt++) {
		const answer = await sendOnce(run, endpoint, body);
		const retry =
			answer instanceof Failure && attempt < run.retries && shouldRetry(answer, repeatable);
		if (retry) await waitUnlessStopped(waitBeforeRetry(answer, attempt, run), run.stopSignal);
		if (tookUnclear(answer)) unclear = answer;
		if (!retry || run.stopSignal?.aborted) {
			const result = unclear && answer instanceof Failure ? sentAgain(unclear, answer) : answer;
			run.memory.remember(itemIndexes, body, result);
			return result;
		}
	}
}

/**
 * Whether the request may have been taken with no clear answer (a 504, a timeout, a lost answer, a
 * redirect): not after a refusal, nor the API's 500 ("retry later") or a proxy's 502 or 503.
 */
export function tookUnclear(result: ApiResult | undefined): result is Failure {
	if (!(result instanceof Failure)) return false;
	return result.mayHaveTakenEffect && !['500', '502', '503'].includes(result.httpCode ?? '');
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

/**
 * Waits, but not past a Stop: n8n abandons a stopped node without ending its promise, so the
 * node's own waits must end themselves (n8n-workflow's `sleep` cannot be cancelled).
 */
export async function waitUnlessStopped(
	ms: number,
	signal: AbortSignal | undefined,
): Promise<void> {
	if (ms <= 0 || signal?.aborted) return;
	// Whole milliseconds within a timer's range, as AbortSignal.timeout requires.
	const timeout = AbortSignal.timeout(Math.min(Math.ceil(ms), 2 ** 31 - 1));
	const ends = signal ? AbortSignal.any([signal, timeout]) : timeout;
	await new Promise((resolve) => ends.addEventListener('abort', resolve, { once: true }));
}

type Records = Record<string, { json: IDataObject } | { failure: FailureFields; attempts: number }>;

/**
 * What the node already did in this execution, so that n8n never makes it do it twice.
 *
 * n8n's node setting Retry On Fail runs the node again, with the same input and the same run
 * index, after it throws, and also when its first output item carries `json.error`
 * (`checkFailure` in n8n-core's workflow-execute), in every On Error mode. The per-execution
 * node context (`getContext('node')`) survives those tries on n8n 1.x and 2.x alike, so the
 * node keeps there what each request did, keyed by run index and items (a Loop Over Items round
 * is a new run index, where item indexes start again). When the node runs as an AI tool, n8n
 * calls `execute` again with a new run index per try: there the key is the request body.
 *
 * A successful run forgets its records, so execution data does not grow with them: only its own,
 * since an AI agent's tool calls run at once and share the context.
 */
export type RunMemory = ReturnType<typeof openRunMemory>;

export function openRunMemory(context: IExecuteFunctions) {
	const store = context.getContext('node') as IContextObject & { basicsEngageDone?: Records };
	const records = (store.basicsEngageDone ??= {});
	// The node's AI tool variant is the same class under the type name n8n derives for it.
	const asTool = context.getNode().type.endsWith('Tool');
	const runIndex = asTool ? 'tool' : String(context.getWorkflowDataProxy(0).$runIndex ?? 0);
	/** The keys this run recalled or remembered: what it may forget. */
	const owned = new Set<string>();
	const keyOf = (itemIndexes: number[], body: IDataObject) => {
		const key = `${runIndex}:${asTool ? JSON.stringify(body) : itemIndexes.join(',')}`;
		owned.add(key);
		return key;
	};
	return {
		/**
		 * An earlier try's answer to this request, when it is not to be sent again: `recall`'s,
		 * unless the request is repeatable, and then only once more.
		 */
		answer(itemIndexes: number[], body: IDataObject, repeatable: boolean): ApiResult | undefined {
			const record = records[keyOf(itemIndexes, body)];
			if (record && 'attempts' in record && repeatable && record.attempts < 2) return undefined;
			return this.recall(itemIndexes, body);
		},

		/** What an earlier try did with this request: its success, or its failure that may have taken effect. */
		recall(itemIndexes: number[], body: IDataObject): ApiResult | undefined {
			const record = records[keyOf(itemIndexes, body)];
			if (!record || 'json' in record) return record?.json;
			return new Failure({
				...record.failure,
				fromEarlierTry: true,
				description: `Not sent again: an earlier try of this execution sent it and got no clear answer. ${record.failure.description}`,
			});
		},

		/** An earlier try's failure after which the request may have been taken (tookUnclear). */
		unclear(itemIndexes: number[], body: IDataObject): Failure | undefined {
			const record = records[keyOf(itemIndexes, body)];
			const failure = record && 'failure' in record ? new Failure(record.failure) : undefined;
			return tookUnclear(failure) ? failure : undefined;
		},

		/** Keeps a success, or a failure that may have taken effect; other failures can be repeated. */
		remember(itemIndexes: number[], body: IDataObject, result: ApiResult): void {
			const key = keyOf(itemIndexes, body);
			if (!(result instanceof Failure)) records[key] = { json: result };
			else if (result.mayHaveTakenEffect) {
				const earlier = records[key];
				const attempts = (earlier && 'attempts' in earlier ? earlier.attempts : 0) + 1;
				records[key] = { failure: result.toJSON(), attempts };
			}
		},

		/** Called when the run ends without a failure: nothing will try its requests again. */
		forget(): void {
			for (const key of owned) delete records[key];
		},
	};
}
