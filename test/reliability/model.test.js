// @ts-check
'use strict';

/**
 * The node's promises, checked against histories fast-check makes up: a workflow and its
 * settings; each request's, store call's and run's fate; then what follows (a new run, n8n's
 * Retry of the failed execution, a run beside it). The oracle is the sandbox: what BasicsEngage
 * accepted. A failing history is shrunk and printed with its seed.
 *
 * `npm test` plays RUNS histories with a fixed seed on n8n 2.x; `npm run soak` plays many
 * more (BASICSENGAGE_MODEL_RUNS, BASICSENGAGE_MODEL_SEED to replay one).
 */

const { randomUUID } = require('node:crypto');
const fc = require('fast-check');
const {
	addProfilesParameters,
	closedBaseUrl,
	deduplicationStore,
	pairedIndexes,
	restartN8n,
	runNode,
	savedWorkflow,
	sendCampaignParameters,
	sendParameters,
	useSandbox,
} = require('../support');

const RUNS = Number(process.env.BASICSENGAGE_MODEL_RUNS) || 30;
const SEED = Number(process.env.BASICSENGAGE_MODEL_SEED) || 35;
jest.setTimeout(Math.max(120_000, RUNS * 4_000));

const RECIPIENTS = 5;
const CAMPAIGNS = 5;
const campaignId = (/** @type {number} */ index) => `${index}`.padStart(24, 'c');

const sandbox = useSandbox({
	dailyLimit: 1_000_000,
	lists: [
		{ listId: 'lst_a', name: 'A', profiles: [{ email: 'member@customer.test' }] },
		{ listId: 'lst_b', name: 'B' },
	],
	campaigns: Array.from({ length: CAMPAIGNS }, (_, index) => ({
		_id: campaignId(index),
		name: `Campaign ${index}`,
		subject: 'Hi',
		recepientList: ['lst_a'],
	})),
});

/** true `yes` times in `yes + no` (fast-check's boolean takes no weights). */
const chance = (/** @type {number} */ yes, /** @type {number} */ no) =>
	fc.oneof(
		{ arbitrary: fc.constant(true), weight: yes },
		{ arbitrary: fc.constant(false), weight: no },
	);

/** What may happen to one request. */
/** @type {Record<string, import('../sandbox/server').Fault>} */
const FATES = {
	accepted: { action: 'delay', delayMs: 0 },
	refused: { status: 400, body: { status: 'error', error: 'Invalid <b>request</b>' } },
	badKey: { status: 401 },
	unknownId: { status: 404, body: { status: 'error', error: 'Not found' } },
	quotaOrLimit: { status: 429 },
	rateLimitShortWait: { status: 429, headers: { 'retry-after': '0' } },
	serverError: { status: 500 },
	htmlPage: {
		status: 503,
		body: '<html><a href="//x.test">Service Unavailable</a></html>',
		headers: { 'content-type': 'text/html' },
	},
	answerLost: { action: 'drop' },
	connectionReset: { action: 'reset' },
	hang: { action: 'hang' },
};
const PATHS = {
	send: '/email/send',
	addProfiles: '/list/addProfiles',
	sendCampaign: '/campaign/send',
};

const executionArb = fc.record({
	items: fc.array(fc.nat(RECIPIENTS - 1), { minLength: 1, maxLength: 6 }),
	fates: fc.array(
		fc.oneof(
			{ arbitrary: fc.constant('accepted'), weight: 4 },
			{
				arbitrary: fc.constantFrom(
					.../** @type {Array<keyof typeof FATES>} */ (Object.keys(FATES)),
				),
				weight: 3,
			},
		),
		{ maxLength: 8 },
	),
	storeFails: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 2 }),
	// A Base URL where nothing listens for the node's first try: connection refused.
	refusedFirstTry: chance(1, 5),
	end: fc.oneof(
		{ arbitrary: fc.constant(/** @type {const} */ ({ by: 'finish', after: 0 })), weight: 4 },
		{
			arbitrary: fc.record({
				by: fc.constantFrom(.../** @type {const} */ (['stop', 'die'])),
				after: fc.integer({ min: 1, max: 4 }),
			}),
			weight: 1,
		},
	),
	follows: fc.constantFrom(.../** @type {const} */ (['new', 'retry', 'beside'])),
});

const historyArb = fc.record({
	operation: fc.constantFrom(.../** @type {const} */ (['send', 'addProfiles', 'sendCampaign'])),
	onError: fc.constantFrom(
		.../** @type {const} */ (['stopWorkflow', 'continueRegularOutput', 'continueErrorOutput']),
	),
	retryOnFail: fc.boolean(),
	retries: fc.integer({ min: 0, max: 1 }),
	concurrency: fc.integer({ min: 1, max: 5 }),
	retrySendOnServerError: chance(1, 2),
	skip: fc.option(fc.constantFrom(3, 10_000), { freq: 2 }),
	validateOnly: chance(1, 9),
	listMode: fc.constantFrom(.../** @type {const} */ (['existing', 'new', 'perItem'])),
	batchSize: fc.integer({ min: 1, max: 3 }),
	executions: fc.array(executionArb, { minLength: 1, maxLength: 3 }),
});

/** @typedef {typeof historyArb extends fc.Arbitrary<infer T> ? T : never} History */

const email = (/** @type {number} */ recipient) => `r${recipient}@customer.test`;

/** @param {History} history @param {string} listName */
function parametersOf(history, listName) {
	const options = {
		concurrency: history.concurrency,
		retries: history.retries,
		retryWait: 0,
		...(history.validateOnly && { validateOnly: true }),
	};
	const requestOptions = { timeout: 300 };
	if (history.operation === 'addProfiles') {
		const list =
			history.listMode === 'new'
				? { listMode: 'new', listName }
				: {
						listMode: 'existing',
						listId: history.listMode === 'perItem' ? '={{ $json.list }}' : 'lst_b',
					};
		return addProfilesParameters({
			...list,
			options: { ...options, batchSize: history.batchSize },
			requestOptions,
		});
	}
	if (history.operation === 'sendCampaign') {
		return sendCampaignParameters({ options, requestOptions });
	}
	return sendParameters({
		text: '={{ $json.uid }}',
		options: {
			...options,
			retrySendOnServerError: history.retrySendOnServerError,
			...(history.skip && {
				skipAlreadySent: { settings: { key: '={{ $json.email }}', historySize: history.skip } },
			}),
		},
		requestOptions,
	});
}

/** Input items: a recipient (or campaign) each, and a uid the accepted email carries. */
function itemsOf(/** @type {number[]} */ picks) {
	return picks.map((pick) => ({
		uid: randomUUID(),
		email: email(pick),
		campaignId: campaignId(pick),
		list: pick % 2 === 0 ? 'lst_a' : 'lst_b',
	}));
}

/**
 * One execution as n8n would run it: its Base URL refused for the first try, its Stop or death.
 * @param {History} history @param {History['executions'][number]} planned
 * @param {{ workflowId: string, nodeOverrides: object }} workflow @param {Record<string, unknown>[]} items
 * @param {string} listName
 */
async function execute(history, planned, workflow, items, listName) {
	const before = sandbox.requests.length;
	const ownRequests = () => sandbox.requests.length - before;
	const closed = await closedBaseUrl();
	let reads = 0;
	const result = await runNode(sandbox, {
		...workflow,
		parameters: parametersOf(history, listName),
		items,
		onError: history.onError,
		retryOnFail: history.retryOnFail,
		maxTries: 2,
		waitBetweenTries: 0,
		baseUrl: planned.refusedFirstTry ? () => (reads++ === 0 ? closed : sandbox.baseUrl) : undefined,
		stopWhen: planned.end.by === 'stop' ? () => ownRequests() >= planned.end.after : undefined,
		diesWhen: planned.end.by === 'die' ? () => ownRequests() >= planned.end.after : undefined,
	});
	return result;
}

/**
 * Plays a history: its executions one after another (or two at once, or n8n's Retry of the one
 * before), then, with Skip on, one clean run of every recipient. Returns what the checks read.
 * @param {History} history
 */
async function play(history) {
	sandbox.reset();
	deduplicationStore.failCalls();
	const workflow = savedWorkflow();
	/** @type {Array<{ planned: History['executions'][number], items: any[], listName: string, result: any, sends: { from: number, to: number, items: any[] } }>} */
	const runs = [];
	const { executions } = history;
	for (let index = 0; index < executions.length; index++) {
		const planned = executions[index];
		const previous = runs.at(-1);
		sandbox.clearFaults();
		sandbox.injectFaults(
			planned.fates.map((fate) => ({ path: PATHS[history.operation], ...FATES[fate] })),
		);
		deduplicationStore.failCalls(...planned.storeFails);
		const sendsBefore = sandbox.state.campaignSends.length;
		if (
			planned.follows === 'retry' &&
			previous?.result?.error &&
			previous.planned.end.by === 'finish'
		) {
			// n8n's Retry of the failed execution: the same execution, its input and its node context.
			const result = await previous.result.retryExecution();
			runs.push({ ...previous, planned, result });
		} else if (
			planned.follows === 'beside' &&
			index + 1 < executions.length &&
			planned.end.by === 'finish'
		) {
			const next = executions[++index];
			const pair = [planned, { ...next, end: planned.end }].map((one) => ({
				planned: one,
				items: itemsOf(one.items),
				listName: `List ${randomUUID()}`,
			}));
			const results = await Promise.all(
				pair.map((one) => execute(history, one.planned, workflow, one.items, one.listName)),
			);
			const together = { from: sendsBefore, to: 0, items: pair.flatMap((one) => one.items) };
			pair.forEach((one, at) => runs.push({ ...one, result: results[at], sends: together }));
		} else {
			const items = itemsOf(planned.items);
			const listName = `List ${randomUUID()}`;
			const result = await execute(history, planned, workflow, items, listName);
			runs.push({ planned, items, listName, result, sends: { from: sendsBefore, to: 0, items } });
		}
		// The campaign sends of this execution (with its Retry), or of the two side by side.
		/** @type {any} */ (runs.at(-1)).sends.to = sandbox.state.campaignSends.length;
		if (planned.end.by === 'die') await restartN8n();
	}
	sandbox.clearFaults();
	deduplicationStore.failCalls();
	// Anything n8n left in flight (a hung request, a dead run) has settled by now.
	await new Promise((resolve) => setTimeout(resolve, 350));
	let clean;
	if (history.operation === 'send' && history.skip && !history.validateOnly) {
		const items = itemsOf(Array.from({ length: RECIPIENTS }, (_, index) => index));
		clean = {
			items,
			result: await runNode(sandbox, {
				...workflow,
				parameters: parametersOf(
					{ ...history, concurrency: 1, retries: 0, retrySendOnServerError: false },
					'',
				),
				items,
				onError: 'continueRegularOutput',
			}),
		};
	}
	return { runs, clean };
}

/** Every output item with its input index: `kind` 'sent', 'skipped' or the error kind. */
function outcomesOf(/** @type {any} */ result) {
	return [...result.success, ...result.errors].flatMap((item) =>
		pairedIndexes(item).map((itemIndex) => ({
			itemIndex,
			json: item.json,
			kind: item.json.error ? item.json.details.kind : item.json.skipped ? 'skipped' : 'sent',
		})),
	);
}

/** Failures that say the request was refused or never left: BasicsEngage did not take it. */
function saysNeverTaken(/** @type {any} */ json) {
	const { kind, httpCode, description } = json.details;
	if (json.error.startsWith('Not sent again')) return false;
	if (
		[
			'invalid_input',
			'invalid_request',
			'invalid_api_key',
			'quota_exceeded',
			'rate_limited',
			'store_unavailable',
		].includes(kind)
	)
		return true;
	if (kind === 'unexpected_response' && httpCode === 404) return true;
	if (kind === 'network_error') return /never reached BasicsEngage/.test(description);
	return /^Not sent: /.test(json.error) && /This item was not sent/.test(description);
}

/** Failures that leave the outcome unknown: the request may have reached BasicsEngage. */
const saysMaybe = (/** @type {any} */ json) =>
	/may have|outcome unknown|no clear answer|could not record/i.test(
		`${json.error} ${json.details.description}`,
	);

/**
 * Asserts `claim` of the thing `about` describes; a failure prints both.
 * @param {Record<string, unknown>} about @param {string} claim @param {boolean} ok
 */
const holds = (about, claim, ok) =>
	expect({ ...about, [claim]: ok }).toEqual({ ...about, [claim]: true });

/** @param {History} history @param {Awaited<ReturnType<typeof play>>} played */
function check(history, { runs, clean }) {
	const accepted = sandbox.state.emails;
	const acceptedUid = (/** @type {string} */ uid) =>
		accepted.filter((sent) => sent.text === uid).length;
	const sendsOf = (
		/** @type {string} */ id,
		/** @type {{ from: number, to: number }} */ { from, to },
	) => sandbox.state.campaignSends.slice(from, to).filter((send) => send.campaignId === id).length;
	const finished = runs.filter((run) => run.planned.end.by === 'finish' && run.result);

	// 1. Never twice. Within one execution (its tries and n8n's Retry included) no item's email
	// or campaign is accepted twice, and with Skip on no recipient is emailed twice across
	// executions, unless History Size had forgotten them (that many others asked for in
	// between); but Retry Send On Server Error may send again an email whose answer was lost.
	const requested = sandbox.requestsTo(PATHS.send);
	const lostAnswer = (/** @type {(body: any) => boolean} */ about) =>
		requested.some(
			(request) =>
				about(request.body) &&
				['drop', 'reset', 'hang', undefined].includes(/** @type {any} */ (request.answer)),
		);
	for (const run of runs) {
		run.items.forEach((item, itemIndex) => {
			if (history.operation === 'send') {
				const mayRepeat =
					history.retrySendOnServerError && lostAnswer((body) => body.text === item.uid);
				holds({ itemIndex }, 'once', acceptedUid(item.uid) <= 1 || mayRepeat);
			}
			if (history.operation === 'sendCampaign') {
				const asked = run.sends.items.filter(
					(other) => other.campaignId === item.campaignId,
				).length;
				holds({ itemIndex }, 'sentAtMostAsAsked', sendsOf(item.campaignId, run.sends) <= asked);
			}
		});
	}
	if (history.operation === 'send' && history.skip) {
		const arrival = (/** @type {string} */ uid) =>
			requested.findLastIndex((request) => request.body.text === uid);
		for (let recipient = 0; recipient < RECIPIENTS; recipient++) {
			const at = accepted
				.filter((sent) => sent.to === email(recipient))
				.map((sent) => arrival(sent.text))
				.sort((a, b) => a - b);
			for (let pair = 1; pair < at.length; pair++) {
				// Each email asked for in between took one of History Size's places.
				const between = new Set(
					requested.slice(at[pair - 1] + 1, at[pair]).map((request) => request.body.to),
				);
				between.delete(email(recipient));
				// A store that would not take "accepted" leaves it reading "unknown" too.
				const storeFailed = history.executions.some((run) => run.storeFails.length > 0);
				const lost =
					history.retrySendOnServerError &&
					(storeFailed || lostAnswer((body) => body.to === email(recipient)));
				holds({ recipient }, 'forgottenOrLost', between.size >= history.skip || lost);
			}
		}
	}

	// 2. Every input item comes out exactly once, paired, in input order, in every On Error mode.
	for (const run of finished) {
		const { result, items } = run;
		if (result.error) {
			expect(result.error.context?.itemIndex ?? 0).toBeLessThan(items.length);
			continue;
		}
		const seen = outcomesOf(result)
			.map((outcome) => outcome.itemIndex)
			.sort((a, b) => a - b);
		expect(seen).toEqual(items.map((_, index) => index));
		for (const output of [result.success, result.errors]) {
			const firsts = output.map((/** @type {object} */ item) => Math.min(...pairedIndexes(item)));
			expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
		}
	}

	// 3. What the run says matches what BasicsEngage saw.
	for (const run of finished) {
		if (run.result.error || history.validateOnly) continue;
		for (const { itemIndex, json, kind } of outcomesOf(run.result)) {
			const item = run.items[itemIndex];
			const about = { itemIndex, kind, error: json.error };
			if (history.operation === 'send') {
				if (kind === 'sent') holds(about, 'accepted', acceptedUid(item.uid) > 0);
				if (kind === 'skipped' && /sent before/.test(json.reason))
					holds(
						about,
						'everAccepted',
						accepted.some((sent) => sent.to === item.email),
					);
				if (json.error && saysNeverTaken(json))
					holds(about, 'notAccepted', acceptedUid(item.uid) === 0);
			}
			if (history.operation === 'sendCampaign' && kind === 'sent') {
				holds(about, 'sent', sendsOf(item.campaignId, run.sends) > 0);
			}
			if (history.operation === 'addProfiles' && kind === 'sent') {
				const list = sandbox.state.lists.get(json.listId);
				holds(about, 'inList', list?.profiles.has(item.email) === true);
			}
			// Server text reaches the editor as plain text.
			if (json.error) expect(`${json.error} ${json.details.description}`).not.toMatch(/[<>]/);
		}
	}

	// 4. Nothing stranded: with Skip on, a recipient BasicsEngage never accepted is sent by a
	// later run, unless a run said it might have gone (or n8n died or was stopped mid-run).
	if (clean) {
		const toldMaybe = new Set(
			runs.flatMap((run) =>
				run.planned.end.by !== 'finish' || !run.result || run.result.error
					? run.items.map((item) => item.email)
					: outcomesOf(run.result)
							.filter(({ json }) => json.error && saysMaybe(json))
							.map(({ itemIndex }) => run.items[itemIndex].email),
			),
		);
		for (const { itemIndex, json, kind } of outcomesOf(clean.result)) {
			const recipient = clean.items[itemIndex].email;
			const everAccepted = accepted.some(
				(sent) => sent.to === recipient && sent.text !== clean.items[itemIndex].uid,
			);
			if (!everAccepted && kind !== 'sent') {
				expect({ recipient, kind, toldMaybe: toldMaybe.has(recipient) }).toEqual({
					recipient,
					kind: 'outcome_unknown',
					toldMaybe: true,
				});
			}
			if (kind === 'outcome_unknown')
				expect(json.details.description).toMatch(/Retry Send On Server Error on/);
		}
	}

	// 5. One list per execution, whatever n8n retries.
	if (history.operation === 'addProfiles' && history.listMode === 'new') {
		for (const run of runs) {
			const created = [...sandbox.state.lists.values()].filter(
				(list) => list.name === run.listName,
			);
			holds({ listName: run.listName }, 'oneList', created.length <= 1);
		}
	}
}

test('never twice, never lost, honest, one list: the promises hold in every generated history of faults', async () => {
	await fc.assert(
		fc.asyncProperty(historyArb, async (history) => {
			check(history, await play(history));
		}),
		{ seed: SEED, numRuns: RUNS },
	);
});
