import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { readNumberOption } from './read';

/** The two values of Request Options > Batching: requests per batch, and the wait between. */
export const requestBatchingValues: [INodeProperties, INodeProperties] = [
	{
		displayName: 'Items per Batch',
		name: 'batchSize',
		type: 'number',
		typeOptions: { minValue: -1, numberPrecision: 0 },
		default: 50,
		description:
			'Input will be split in batches to throttle requests. -1 for disabled. 0 will be treated as 1.',
	},
	{
		displayName: 'Batch Interval (Ms)',
		name: 'batchInterval',
		type: 'number',
		typeOptions: { minValue: 0 },
		default: 1000,
		description: 'Time (in milliseconds) between each batch of requests. 0 for disabled.',
	},
];

/**
 * Options > Concurrency: requests in flight at once, 5 unless the operation says otherwise.
 * BasicsEngage publishes no rate limit; 5 is what Send Email has always used against it.
 */
export function concurrencyOption(description: string): INodeProperties {
	return {
		displayName: 'Concurrency',
		name: 'concurrency',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 50, numberPrecision: 0 },
		default: 5,
		description,
	};
}

export const requestTimeout: INodeProperties = {
	displayName: 'Timeout',
	name: 'timeout',
	type: 'number',
	// An hour at most: an answer later than that is lost anyway, and timers cannot wait for ever.
	typeOptions: { minValue: 1, maxValue: 3_600_000 },
	default: 10000,
	description:
		'Time in ms to wait for the whole answer of BasicsEngage (headers and body) before giving up on a request',
};

// n8n's routing node waits this long when the user sets no timeout; keep the same default.
const DEFAULT_TIMEOUT_MS = 300_000;

/** Request Options > Timeout, in milliseconds. */
export const readTimeout = (requestOptions: IDataObject) =>
	readNumberOption(requestOptions, requestTimeout, DEFAULT_TIMEOUT_MS);

/**
 * n8n's own "Request Options" collection, with its field names and defaults (n8n-core's
 * `commonDeclarativeNodeOptionParameters`). n8n adds it only to declarative nodes without an
 * `execute` method; this node has one (n8n calls `execute` when the node runs as an AI tool),
 * so it declares the collection itself and saved workflows keep their settings.
 */
export const requestOptionsProperty: INodeProperties = {
	displayName: 'Request Options',
	name: 'requestOptions',
	type: 'collection',
	isNodeSetting: true,
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Batching',
			name: 'batching',
			placeholder: 'Add Batching',
			type: 'fixedCollection',
			typeOptions: { multipleValues: false },
			default: { batch: {} },
			options: [{ displayName: 'Batching', name: 'batch', values: requestBatchingValues }],
		},
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'allowUnauthorizedCerts',
			type: 'boolean',
			noDataExpression: true,
			default: false,
			description: 'Whether to connect even if SSL certificate validation is not possible',
		},
		{
			displayName: 'Proxy',
			name: 'proxy',
			type: 'string',
			default: '',
			placeholder: 'e.g. http://myproxy:3128',
			description:
				'HTTP proxy to use. If authentication is required it can be defined as follow: http://username:password@myproxy:3128.',
		},
		requestTimeout,
	],
};

/** A dry run, read by the transport: every check, no request, nothing recorded. */
const validateOnlyOption: INodeProperties = {
	displayName: 'Validate Only (Send Nothing)',
	name: 'validateOnly',
	type: 'boolean',
	default: false,
	description:
		'Whether to run every check and output the requests that would be sent, without sending any: no quota spent, nothing created, nothing remembered',
};

/** A sending operation's "Options": its own options, then Validate Only. */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		// In alphabetical order, as n8n's own collections are (its lint cannot see a built list).
		options: [...options, validateOnlyOption].sort((a, b) =>
			a.displayName.localeCompare(b.displayName),
		),
	};
}

export const retriesOption: INodeProperties = {
	displayName: 'Retries',
	name: 'retries',
	type: 'number',
	typeOptions: { minValue: 0, maxValue: 10, numberPrecision: 0 },
	default: 2,
	description: 'How many times to send a failed request again. 0 turns retries off.',
};

export const retryWaitOption: INodeProperties = {
	displayName: 'Retry Wait',
	name: 'retryWait',
	type: 'number',
	typeOptions: { minValue: 0, maxValue: 60_000 },
	default: 1000,
	description:
		'Milliseconds to wait before the first retry (at most 60,000); the wait doubles for each further retry, with some randomness. A Retry-After answer from BasicsEngage takes precedence.',
};

/**
 * The Retries options. With `consequence`, those of an operation whose request is never sent
 * again once it may have reached BasicsEngage (creating a list or a campaign, sending a
 * campaign): not `repeatable`.
 */
export function retryOptions(consequence?: string): INodeProperties[] {
	const retries = consequence
		? `How many times to send a request again when it provably never reached BasicsEngage (connection refused, address not found). Never after a server error, a dropped connection or a timeout: ${consequence}. 0 turns retries off.`
		: retriesOption.description;
	return [{ ...retriesOption, description: retries }, retryWaitOption];
}
