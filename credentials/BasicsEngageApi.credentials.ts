import type {
	Icon,
	ICredentialDataDecryptedObject,
	IAuthenticateRuleResponseSuccessBody,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import {
	BASE_URL_PATH_HINT,
	checkCredential,
	DEFAULT_BASE_URL,
	normalizeBaseUrl,
} from '../nodes/BasicsEngage/helpers/credentialChecks';
import type { CredentialProblem } from '../nodes/BasicsEngage/helpers/credentialChecks';

export { DEFAULT_BASE_URL };

/**
 * How long the credential test may take in all. Unbounded, n8n waits 5 minutes for a server that
 * never answers, and for ever for one that drips its answer; BasicsEngage answers the probe at once.
 */
const TEST_DEADLINE_SECONDS = 15;

/**
 * The probe's body. No node run can send it (the node refuses a recipient without "@"), so
 * `authenticate` knows the credential test's request by it.
 */
const PROBE = {
	to: 'credential-test.invalid-recipient',
	from: 'credential-test@example.com',
	subject: 'n8n credential test (never queued)',
	text: 'n8n credential test',
};

/** This machine: plain http stays off the network. */
export function isLoopback(hostname: string): boolean {
	return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d+){3}$/.test(hostname);
}

/**
 * When the credential form's notice shows: an http:// Base URL whose host is not localhost,
 * 127.x.x.x or [::1] (`isLoopback` decides at run time). Prefixes, not a `_cnd` regex: n8n 2.x
 * runs such a regex with a 250 ms timeout on every read of the credential, and a busy n8n failed
 * the read ("Regular expression execution timed out").
 */
const SCHEMES = ['http://', 'HTTP://'];
const PLAIN_HTTP_NOTICE = {
	show: { baseUrl: SCHEMES.map((scheme) => ({ _cnd: { startsWith: scheme } })) },
	hide: {
		baseUrl: SCHEMES.flatMap((scheme) =>
			['localhost', '127.', '[::1]'].map((host) => ({ _cnd: { startsWith: scheme + host } })),
		),
	},
};

/**
 * What an answer to the probe shows, read from its body (n8n's rules see no status). Per the
 * spec, the invalid recipient's 400 and a used-up quota's 429 (the key works) carry `error`;
 * the key's 401 and a 5xx carry `message` only; a page that is not the API has no `status`.
 */
const TEST_RULES: IAuthenticateRuleResponseSuccessBody[] = [
	{
		type: 'responseSuccessBody',
		properties: {
			key: 'status',
			value: 'success',
			message: 'BasicsEngage queued the test email instead of rejecting it; check the Base URL',
		},
	},
	{
		type: 'responseSuccessBody',
		properties: {
			key: 'status',
			value: undefined,
			message: `The Base URL answered, but not like the BasicsEngage API (no "status" field): ${BASE_URL_PATH_HINT}`,
		},
	},
	{
		type: 'responseSuccessBody',
		properties: { key: 'message', value: 'Invalid API key', message: 'Invalid API key' },
	},
	{
		type: 'responseSuccessBody',
		properties: {
			key: 'error',
			value: undefined,
			message: `BasicsEngage did not accept the test request (no "error" text in its answer): its server may have failed, or the API key or the Base URL is wrong; ${BASE_URL_PATH_HINT}`,
		},
	},
];

export class BasicsEngageApi implements ICredentialType {
	name = 'basicsEngageApi';

	displayName = 'BasicsEngage API';

	icon: Icon = {
		light: 'file:../nodes/BasicsEngage/basicsEngage.svg',
		dark: 'file:../nodes/BasicsEngage/basicsEngage.dark.svg',
	};

	documentationUrl = 'https://github.com/basicsengage/n8n-nodes-basicsengage#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'The API key from your BasicsEngage dashboard',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: DEFAULT_BASE_URL,
			placeholder: DEFAULT_BASE_URL,
			description:
				'Address of the BasicsEngage API, including its version segment. Change it only for a sandbox or a self-hosted gateway.',
		},
		{
			displayName:
				'Over http:// to another machine the API key travels unencrypted: use https://, or keep http:// only for a gateway on a trusted network (workflows run with it; the credential test does not send the key)',
			name: 'plainHttpNotice',
			type: 'notice',
			default: '',
			displayOptions: PLAIN_HTTP_NOTICE,
		},
	];

	// A function rather than a generic expression: n8n evaluates a generic one through its
	// expression engine on every request, which was a fifth of a large Send Email run.
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const apiKey = String(credentials.apiKey ?? '').trim();
		// Node runs checked the credential once per run (readSettings); the probe is checked here.
		const body = requestOptions.body as { to?: unknown } | undefined;
		if (body?.to === PROBE.to) prepareProbe(credentials, apiKey, requestOptions);
		requestOptions.headers = { ...requestOptions.headers, Authorization: `Bearer ${apiKey}` };
		return requestOptions;
	}

	// Sends no email and creates no list: the recipient is invalid, so a working key gets 400.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.trim().replace(/\\/+$/, "")}}',
			url: '/email/send',
			method: 'POST',
			body: PROBE,
			json: true,
			// A redirect would carry the key to another host: never followed, its answer fails below.
			disableFollowRedirect: true,
			// Every answer reaches the rules, as on n8n 1.x (which ignores a list of statuses to fail).
			ignoreHttpStatusErrors: true,
		},
		rules: TEST_RULES,
	};
}

/**
 * The credential test's own checks, before its request. n8n shows what `authenticate` throws as
 * the test's result and sends nothing, so this says what is wrong where a request would only get
 * "Invalid API key" or "Not Found", and it bounds the test in time.
 */
function prepareProbe(
	credentials: ICredentialDataDecryptedObject,
	apiKey: string,
	requestOptions: IHttpRequestOptions,
): void {
	const checked = checkCredential(normalizeBaseUrl(credentials.baseUrl), apiKey);
	if (!(checked instanceof URL)) throw problemError(checked);
	const { protocol, hostname, host } = checked;
	if (protocol === 'http:' && !isLoopback(hostname)) {
		// A warning, not a block (runs keep working); but n8n's test result is only "Error" or its
		// own fixed OK text, and testing would put the key on the network unencrypted.
		throw new Error(
			`Not tested, to keep the API key off the network: the Base URL uses http:// to ${host}, so the key would travel unencrypted. Use https://; workflows still run with this Base URL (for a gateway on a trusted network).`,
		);
	}
	// n8n's routing sets its own 5-minute timeout on the test request, so it is set here; it only
	// fires while the connection is idle, so a little later than the deadline, as a backstop.
	requestOptions.timeout = (TEST_DEADLINE_SECONDS + 5) * 1000;
	requestOptions.abortSignal = deadlineSignal(
		TEST_DEADLINE_SECONDS * 1000,
		new Error(
			`BasicsEngage did not answer within ${TEST_DEADLINE_SECONDS} seconds: check the Base URL`,
		),
	);
}

function problemError({ message, description }: CredentialProblem): Error {
	return new Error(`${message}. ${description}`);
}

/**
 * Ends the probe at the deadline with `reason` as its result. n8n's tester shows a failure that
 * got no HTTP answer by its code, so an AbortSignal's abort would read "ERR_CANCELED". n8n types
 * `abortSignal` as axios's GenericAbortSignal and hands it to axios as it is (after
 * `authenticate`, on 1.x and 2.x), and axios rejects with what its abort listener is handed
 * unless that is an Event: so this signal of its own hands it the reason.
 */
function deadlineSignal(ms: number, reason: Error): IHttpRequestOptions['abortSignal'] {
	const deadline = AbortSignal.timeout(ms);
	return {
		aborted: false,
		addEventListener: (_type: 'abort', abort: (reason: Error) => void) =>
			deadline.addEventListener('abort', () => abort(reason), { once: true }),
		// Left to the deadline: axios ignores a late abort of a settled request.
		removeEventListener: () => {},
	};
}
