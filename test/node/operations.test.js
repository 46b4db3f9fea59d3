// @ts-check
'use strict';

/**
 * The rules every operation keeps, one table over the operations, on both engines: its run and
 * output schema, the key nowhere, pairing, On Error, Stop Workflow's report, the answer contract,
 * Validate Only, settings that cannot work. What decides a kind or wording: test/unit/.
 */

const fs = require('node:fs');
const path = require('node:path');
const {
	API_KEY,
	NODE_TYPE,
	PACKAGE_DIR,
	SCHEMA_DIR,
	addProfilesParameters,
	closedBaseUrl,
	contacts,
	createCampaignParameters,
	createListParameters,
	expectEachInputExactlyOnce,
	expectNoSecret,
	expectShippedSchema,
	loadPackage,
	pairedIndexes,
	runNode,
	sendAndWaitParameters,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const CAMPAIGN_ID = 'cccccccccccccccccccccccc';

// One list and one campaign sent to it: what Add Profiles, Create Campaign and Send Campaign need.
const sandbox = useSandbox({
	lists: [{ listId: 'lst_vip', name: 'VIP', profiles: [{ email: 'vip@customer.test' }] }],
	campaigns: [{ _id: CAMPAIGN_ID, name: 'VIP news', subject: 'Hi', recepientList: ['lst_vip'] }],
});

/**
 * Each operation: its parameters, its path, its shipped output schema, what its successes are called in Stop Workflow's
 * report (`done`), what a request that reached BasicsEngage may have done (`effect`), and the
 * output of one successful run of two items. Send and Wait sends one email for the whole input
 * and waits: it has no output, no report and no per-item failure but the first.
 * @type {Record<string, { parameters: import('../parameters').NodeParameters, path: string, schema: string, effect: string } & ({ done: string, output: object } | { waits: true, done?: undefined })>}
 */
const OPERATIONS = {
	'Send Email': {
		parameters: sendParameters({ options: { concurrency: 1 } }),
		path: '/email/send',
		schema: 'email/send',
		done: 'Queued',
		effect: 'the email may have been queued',
		output: { messageId: expect.any(String) },
	},
	'Send and Wait for Response': {
		parameters: sendAndWaitParameters(),
		path: '/email/send',
		schema: 'email/sendAndWait',
		effect: 'the email may have been queued',
		waits: true,
	},
	'Add Profiles': {
		parameters: addProfilesParameters({
			listMode: 'existing',
			listId: 'lst_vip',
			options: { batchSize: 1, concurrency: 1 },
		}),
		path: '/list/addProfiles',
		schema: 'list/addProfiles',
		done: 'Added',
		effect: 'the profiles may have been added',
		output: { listId: 'lst_vip', addedCount: 1, submittedCount: 1, listCreated: false },
	},
	'Create List': {
		parameters: createListParameters(),
		path: '/list/create',
		schema: 'list/create',
		done: 'Created',
		effect: 'the list may have been created',
		output: { listId: expect.any(String) },
	},
	'Create Campaign': {
		parameters: createCampaignParameters({ recipientListIds: 'lst_vip' }),
		path: '/campaign/create',
		schema: 'campaign/create',
		done: 'Created',
		effect: 'the campaign may have been created',
		output: { campaignId: expect.any(String), name: 'Spring sale', subject: '20% off' },
	},
	'Send Campaign': {
		parameters: sendCampaignParameters({ campaignId: CAMPAIGN_ID }),
		path: '/campaign/send',
		schema: 'campaign/send',
		done: 'Started sending',
		effect: 'the campaign may have started sending',
		output: { campaignId: CAMPAIGN_ID, sendingStarted: true },
	},
};
const NAMES = /** @type {Array<keyof typeof OPERATIONS>} */ (Object.keys(OPERATIONS));
/** Operations with an output per item or batch (all but Send and Wait). */
const ITEMWISE = NAMES.filter((name) => !('waits' in OPERATIONS[name]));

/** @param {keyof typeof OPERATIONS} name @param {Record<string, any>} [run] further runNode options */
const run = (name, run = {}) =>
	runNode(sandbox, {
		items: contacts(2),
		...run,
		parameters: { ...OPERATIONS[name].parameters, ...run.parameters },
	});

/** A refusal of the next request, whose text echoes the key (a careless server). */
const refuseNext = () =>
	sandbox.injectFaults([
		{ status: 400, body: { status: 'error', error: `Bad request for key ${API_KEY}` } },
	]);

test.each(NAMES)(
	'%s: one run sends the documented request with the key, pairs each output, shows the key nowhere',
	async (name) => {
		const operation = OPERATIONS[name];
		const result = await run(name);
		expect(result.error).toBeUndefined();
		const requests = sandbox.requestsTo(operation.path);
		expect(requests.length).toBeGreaterThan(0);
		for (const request of requests) {
			expect(request.method).toBe('POST');
			expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
			expect(request.headers['content-type']).toMatch(/^application\/json/);
		}
		if ('waits' in operation) {
			expect(requests).toHaveLength(1);
			expect(result.waitTill).toBeDefined();
		} else {
			expect(result.success.map((item) => item.json)).toEqual([
				expect.objectContaining(operation.output),
				expect.objectContaining(operation.output),
			]);
			expect(result.success.map(pairedIndexes)).toEqual([[0], [1]]);
			expectShippedSchema(operation.schema, result.success[0].json);
		}
		expectNoSecret(result, API_KEY);
	},
);

test.each([
	['Send Email', 3],
	['Send Email', undefined],
	['Add Profiles', 3],
	['Add Profiles', undefined],
])(
	'%s at Concurrency %s (default 5): more than one request in flight, never more; outputs in input order, each paired',
	async (name, concurrency) => {
		const limit = concurrency ?? 5;
		const { path } = OPERATIONS[/** @type {keyof typeof OPERATIONS} */ (name)];
		// In flight falls only at an answer: arrived minus answered, just before each answer.
		let [inFlight, answered] = [0, 0];
		sandbox.setOptions({
			latencyMs: 30,
			onResponse: () => {
				inFlight = Math.max(inFlight, sandbox.requestsTo(path).length - answered++);
			},
		});
		const options = {
			...(name === 'Add Profiles' && { batchSize: 1 }),
			...(concurrency && { concurrency }),
		};
		const result = await run(/** @type {keyof typeof OPERATIONS} */ (name), {
			parameters: { options },
			items: contacts(4 * limit),
		});
		expect(inFlight).toBeGreaterThan(limit - 2);
		expect(inFlight).toBeLessThanOrEqual(limit);
		expect(result.success.map(pairedIndexes)).toEqual(
			contacts(4 * limit).map((_, index) => [index]),
		);
		if (name === 'Send Email') {
			const to = (/** @type {any} */ item) =>
				sandbox.state.emails.find((email) => email.messageId === item.json.messageId)?.to;
			expect(result.success.map(to)).toEqual(contacts(4 * limit).map((contact) => contact.email));
		}
	},
);

test.each(NAMES)(
	'%s, Validate Only: nothing sent, nothing waits; the output holds each request the real run sends, paired',
	async (name) => {
		const { parameters } = OPERATIONS[name];
		const dry = await run(name, {
			parameters: { options: { ...parameters.options, validateOnly: true } },
		});
		expect(sandbox.requests).toEqual([]);
		expect(dry.waitTill).toBeUndefined();
		await run(name);
		// Send and Wait's links name the execution, which differs between the two runs.
		const unlinked = (/** @type {unknown} */ value) =>
			JSON.parse(JSON.stringify(value).replace(/webhook-waiting\/[^"\\]+/g, 'link'));
		expect(unlinked(dry.success.map((item) => item.json))).toEqual(
			unlinked(
				sandbox.requests.map(({ method, path, body }) => ({
					validateOnly: true,
					request: { method, path, body },
				})),
			),
		);
		// Send and Wait sends one email for the whole input.
		const pairing = 'waits' in OPERATIONS[name] ? [[0, 1]] : [[0], [1]];
		expect(dry.success.map(pairedIndexes)).toEqual(pairing);
		expectNoSecret(dry, API_KEY);
	},
);

test('every operation of the node has a shipped output schema, and no schema names an operation it lacks', async () => {
	const { nodes } = await loadPackage(PACKAGE_DIR);
	const operations = nodes[NODE_TYPE].description.properties
		.filter((/** @type {any} */ property) => property.name === 'operation')
		.flatMap((/** @type {any} */ property) =>
			property.options.map(
				(/** @type {any} */ option) =>
					`${property.displayOptions.show.resource[0]}/${option.value}`,
			),
		);
	const schemas = fs
		.readdirSync(SCHEMA_DIR)
		.flatMap((resource) =>
			fs
				.readdirSync(path.join(SCHEMA_DIR, resource))
				.map((file) => `${resource}/${file.replace(/\.json$/, '')}`),
		);
	expect(schemas.sort()).toEqual(operations.sort());
	expect(NAMES.map((name) => OPERATIONS[name].schema).sort()).toEqual(operations.sort());
});

describe('On Error, for a refused request (400) whose text echoes the key', () => {
	test.each(NAMES)(
		'%s, Continue (using error output): the item fails alone, paired, keeping its fields, nothing waits; the key is redacted',
		async (name) => {
			refuseNext();
			const result = await run(name, {
				items: [
					{ email: 'a@customer.test', crmId: 'c-1', campaignId: CAMPAIGN_ID },
					contacts(1)[0],
				],
				onError: 'continueErrorOutput',
			});
			expect(result.error).toBeUndefined();
			const [failed, ...others] = result.errors;
			expect(failed.pairedItem).toEqual({ item: 0 });
			// n8n merges the input item's fields under the error, so users keep their data.
			expect(failed.json).toMatchObject({ crmId: 'c-1', error: expect.any(String) });
			expect(failed.json.details).toEqual({
				kind: 'invalid_request',
				httpCode: 400,
				description: expect.stringContaining('[redacted]'),
			});
			if ('waits' in OPERATIONS[name]) {
				// One email for the whole input: its failure is every item's.
				expect(others.map(pairedIndexes)).toEqual([[1]]);
				expect(result.waitTill).toBeUndefined();
			} else {
				expect(others).toEqual([]);
				expect(result.success.map(pairedIndexes)).toEqual([[1]]);
			}
			expectEachInputExactlyOnce(result, 2);
			expectNoSecret(result, API_KEY);
		},
	);

	test.each(NAMES)(
		'%s, Continue (regular output): the failed item is { error, details } on the main output, in input order',
		async (name) => {
			refuseNext();
			const result = await run(name, { onError: 'continueRegularOutput' });
			expect(result.errors).toEqual([]);
			expect(result.success[0]).toEqual({
				json: {
					error: expect.stringMatching(/^BasicsEngage rejected the request: /),
					details: { kind: 'invalid_request', httpCode: 400, description: expect.any(String) },
				},
				pairedItem: { item: 0 },
			});
			if (!('waits' in OPERATIONS[name]))
				expect(result.success.map(pairedIndexes)).toEqual([[0], [1]]);
			expectNoSecret(result, API_KEY);
		},
	);

	test.each(NAMES)(
		'%s, Stop Workflow: a NodeApiError for the item, its cause for n8n, nothing sent after it',
		async (name) => {
			refuseNext();
			const result = await run(name, { items: contacts(3) });
			expect(result.error).toMatchObject({
				name: 'NodeApiError',
				httpCode: '400',
				failure: { cause: 'configuration-invalid' },
				context: { itemIndex: 0 },
			});
			expect(result.error?.message).toMatch(/^BasicsEngage rejected the request: /);
			expect(sandbox.requests).toHaveLength(1);
			expectNoSecret(result, API_KEY);
		},
	);
});

test.each(ITEMWISE)(
	"%s, Stop Workflow's report: the error names the failed item and what the run already did",
	async (name) => {
		const operation = OPERATIONS[name];
		sandbox.injectFaults([{ action: 'delay', delayMs: 0 }, { status: 500 }]);
		const result = await run(name, {
			parameters: { options: { ...operation.parameters.options, concurrency: 1, retries: 0 } },
			items: contacts(3),
		});
		expect(result.error?.context.itemIndex).toBe(1);
		expect(result.error?.failure).toEqual({ cause: 'temporarily-unavailable' });
		expect(result.error?.description).toContain(
			`${operation.effect}: check before sending it again`,
		);
		expect(result.error?.description).toContain(`${operation.done} in this run (item indexes): 0.`);
		expect(sandbox.requests).toHaveLength(2);
	},
);

test.each(ITEMWISE)(
	'%s: a refused API key (401) stops the run after one request; the other items fail as not sent, with its kind',
	async (name) => {
		const result = await run(name, {
			items: contacts(3),
			apiKey: 'be_wrong_key',
			onError: 'continueErrorOutput',
		});
		// Only one request: n8n does not send it again either (the node handles statuses itself).
		expect(sandbox.requests).toHaveLength(1);
		expect(result.errors.map((item) => item.json.details.kind)).toEqual(
			Array(3).fill('invalid_api_key'),
		);
		expect(result.errors[1].json.error).toMatch(/^Not sent/);
		expect(result.errors[1].json.details.description).toMatch(
			/This item was not sent, so it can be sent again later/,
		);
		expectEachInputExactlyOnce(result, 3);
		expectNoSecret(result, 'be_wrong_key');

		sandbox.reset();
		const stopped = await run(name, { items: contacts(3), apiKey: 'be_wrong_key' });
		expect(stopped.error?.failure).toEqual({ cause: 'credential-invalid' });
		expect(stopped.error?.message).toMatch(/BasicsEngage rejected the API key/);
		expect(sandbox.requests).toHaveLength(1);
	},
);

test.each(NAMES)(
	'%s: a 200 that is not the documented success is unexpected_response, may have taken effect, and is never sent again',
	async (name) => {
		sandbox.injectFaults([{ status: 200, body: { status: 'error', data: {} } }]);
		const result = await run(name, {
			parameters: {
				options: {
					...OPERATIONS[name].parameters.options,
					retries: 3,
					retrySendOnServerError: true,
				},
			},
			items: contacts(1),
			onError: 'continueErrorOutput',
		});
		expect(sandbox.requests).toHaveLength(1);
		expect(result.success).toEqual([]);
		expect(result.errors[0].json.details).toMatchObject({
			kind: 'unexpected_response',
			httpCode: 200,
		});
		expect(result.errors[0].json.details.description).toContain(OPERATIONS[name].effect);
	},
);

/** Each operation that names an ID: one BasicsEngage does not know, and what its error says. @type {Record<string, [object, RegExp]>} */
const UNKNOWN_IDS = {
	'Add Profiles': [{ listId: 'lst_missing' }, /List not found/],
	'Create List': [{ profileIds: 'prof_missing' }, /Profile "prof_missing" not found/],
	'Create Campaign': [{ recipientListIds: 'list_missing' }, /List "list_missing" not found/],
	'Send Campaign': [{ campaignId: '000000000000000000000000' }, /Campaign not found/],
};

test.each(Object.keys(UNKNOWN_IDS))(
	'%s: an ID BasicsEngage does not know (404) fails each item as unexpected_response, naming it; nothing is created',
	async (name) => {
		const [parameters, message] = UNKNOWN_IDS[/** @type {keyof typeof UNKNOWN_IDS} */ (name)];
		const { lists, campaigns } = sandbox.state;
		const before = [lists.size, campaigns.size];
		const result = await run(/** @type {keyof typeof OPERATIONS} */ (name), {
			parameters,
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map(pairedIndexes)).toEqual([[0], [1]]);
		for (const item of result.errors) {
			expect(item.json.details).toMatchObject({ kind: 'unexpected_response', httpCode: 404 });
			expect(item.json.error).toMatch(message);
		}
		expect([lists.size, campaigns.size, sandbox.state.campaignSends]).toEqual([...before, []]);
	},
);

// Redirected to the sandbox's own origin: a followed redirect would be its second request.
test.each(NAMES)(
	'%s: a redirect is not followed, so the API key never leaves for another host; the item names the status and the host, not the query',
	async (name) => {
		const location = `${sandbox.origin}/collect?token=s3cr3t`;
		sandbox.injectFaults([{ status: 307, body: '', headers: { location } }]);
		const result = await run(name, { items: contacts(1), onError: 'continueErrorOutput' });
		expect(sandbox.requests).toHaveLength(1);
		const { error, details } = result.errors[0].json;
		expect(details).toMatchObject({ kind: 'unexpected_response', httpCode: 307 });
		expect(error).toContain(`HTTP 307) to ${new URL(sandbox.origin).host}`);
		expect(JSON.stringify(result.errors)).not.toContain('s3cr3t');
	},
);

describe('a setting that cannot work fails every item as invalid_input (credential_unavailable, temporary, when n8n itself fails to read the credential), naming it, sending nothing', () => {
	/**
	 * What each setting is, what its error names, and a part of it no output may show (`shown`) or,
	 * where it holds no secret, what its description says (`says`).
	 */
	const settings = {
		'an API key with a line break': {
			run: { apiKey: 'be_sandbox\r\nX-Injected: 1' },
			names: /API key/,
			shown: 'X-Injected',
		},
		'an API key pasted with "Bearer "': {
			run: { apiKey: `Bearer ${API_KEY}` },
			names: /"Bearer "/,
			shown: API_KEY,
		},
		'a Base URL that is not a URL': {
			run: { baseUrl: 'not a url at all' },
			names: /Base URL/,
			shown: 'not a url at all',
		},
		'a Base URL with a password': {
			run: { baseUrl: 'http://user:pw1234@127.0.0.1/api' },
			names: /user name or password/,
			shown: 'pw1234',
		},
		'a proxy that is not a URL': {
			run: { parameters: { requestOptions: { proxy: 'proxy with spaces' } } },
			names: /Proxy/,
			shown: 'proxy with spaces',
		},
		'a proxy password with a stray "%"': {
			run: { parameters: { requestOptions: { proxy: 'http://user:s3cret-pw50%off@127.0.0.1:9' } } },
			names: /^The Proxy in Request Options is not valid: .*"%"/,
			shown: 's3cret-pw',
		},
		'a Retries option out of range': {
			run: { parameters: { options: { retries: '={{ 11 }}' } } },
			names: /Retries must be/,
			says: /^The option Retries is "11"\. .* Nothing was sent\.$/,
		},
		'a Timeout that is no number': {
			run: { parameters: { requestOptions: { timeout: '={{ "soon" }}' } } },
			names: /Timeout must be/,
			says: /^The option Timeout is "soon"\. .* Nothing was sent\.$/,
		},
		'no credential selected (n8n: "Node does not have any credentials set")': {
			run: { nodeOverrides: { credentials: {} } },
			names: /^The BasicsEngage credential could not be read$/,
			says: /^Select a BasicsEngage API credential in the node\. n8n said: Node does not have any credentials set for "basicsEngageApi"\. Nothing was sent\.$/,
		},
		'a credential n8n fails to read (its own error: a regex timeout on a busy n8n, its database)': {
			run: {
				baseUrl: () => {
					throw new Error('Regular expression execution timed out');
				},
			},
			names: /^Not sent: n8n could not read the BasicsEngage credential$/,
			says: /^n8n said: Regular expression execution timed out\. The credential itself may be fine: try again later\. Nothing was sent\.$/,
			kind: 'credential_unavailable',
		},
	};

	test.each(NAMES.flatMap((name) => Object.keys(settings).map((setting) => [name, setting])))(
		'%s: %s',
		async (name, setting) => {
			const row = settings[/** @type {keyof typeof settings} */ (setting)];
			const kind = 'kind' in row ? row.kind : 'invalid_input';
			const result = await run(/** @type {keyof typeof OPERATIONS} */ (name), {
				...row.run,
				items: contacts(2),
				onError: 'continueErrorOutput',
			});
			expect(sandbox.requests).toHaveLength(0);
			expect(result.success).toEqual([]);
			expect(result.waitTill).toBeUndefined();
			expect(result.errors.map((item) => item.json.details.kind)).toEqual([kind, kind]);
			expectEachInputExactlyOnce(result, 2);
			for (const item of result.errors) {
				expect(item.json.error).toMatch(row.names);
				if ('shown' in row) expect(JSON.stringify(item.json)).not.toContain(row.shown);
				else expect(item.json.details.description).toMatch(row.says);
			}
			expectNoSecret(result, API_KEY);
			// Stop Workflow: n8n is told the kind's cause (a temporary one may be run again as it is).
			const stopped = await run(/** @type {keyof typeof OPERATIONS} */ (name), row.run);
			expect(stopped.error?.failure).toEqual({
				cause: kind === 'invalid_input' ? 'configuration-invalid' : 'temporarily-unavailable',
			});
			expect(sandbox.requests).toHaveLength(0);
		},
	);
});

test.each(ITEMWISE)(
	'%s: nothing listens at the Base URL: network_error per item, "never reached", paired',
	async (name) => {
		const result = await run(name, {
			parameters: { options: { ...OPERATIONS[name].parameters.options, retries: 0 } },
			baseUrl: await closedBaseUrl(),
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => item.json.details.kind)).toEqual([
			'network_error',
			'network_error',
		]);
		expect(result.errors[0].json.error).toBe(
			'BasicsEngage could not be reached: the connection was refused',
		);
		expect(result.errors[0].json.details.description).toMatch(/never reached BasicsEngage/);
		expectEachInputExactlyOnce(result, 2);
	},
);
