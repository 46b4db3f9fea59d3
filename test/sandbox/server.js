// @ts-check
'use strict';

/**
 * A local BasicsEngage API for tests and demos, following the published BasicsEngage API contract.
 * Where the spec is silent, the behaviour chosen is listed in ./README.md.
 *
 *   const sandbox = await startSandbox();
 *   await fetch(`${sandbox.baseUrl}/email/send`, { method: 'POST', headers: {...}, body });
 *   sandbox.requests; sandbox.state.emails; await sandbox.close();
 */

const http = require('node:http');
const { z } = require('zod');
const { ROUTES, CAMPAIGN_LIST_FIELDS, profileSchema, addNewProfiles } = require('./routes');
const { createFaultQueue, defaultFaultBody, faultListSchema } = require('./faults');

const DEMO_API_KEY = 'be_sandbox_demo_key';
const LIST_AUTH_HEADERS = /** @type {const} */ (['Authroization', 'Authorization', 'either']);

const isFunction = z.custom((value) => typeof value === 'function', {
	message: 'must be a function',
});

/** Each option with its default; `SandboxOptions` is what startSandbox takes. */
const sandboxOptionsSchema = z
	.object({
		/** TCP port; 0 picks a free one. */
		port: z.number().int().min(0).max(65535).default(0),
		host: z.string().min(1).default('127.0.0.1'),
		/** Path prefix of every route. */
		basePath: z
			.string()
			.regex(/^\/.*[^/]$/, 'basePath must start with "/" and not end with "/"')
			.default('/api/v0/dev'),
		apiKeys: z.array(z.string().min(1)).default(() => [DEMO_API_KEY]),
		/** Emails per API key per UTC day. */
		dailyLimit: z.number().int().min(0).default(100),
		/** templateId -> its variable names. */
		templates: z
			.record(z.string(), z.array(z.string()))
			.default(() => ({ tmpl_welcome: ['firstName', 'company'] })),
		/** Accepted `from` addresses (case-insensitive); null accepts any sender. */
		verifiedSenders: z
			.array(z.string())
			.nullable()
			.default(() => ['hello@example.com', 'noreply@example.com']),
		/** The header Add Profiles reads the key from; by default the spelling the spec publishes. */
		listAuthHeader: z.enum(LIST_AUTH_HEADERS).default('Authroization'),
		/** Delay before answering every request. */
		latencyMs: z.number().int().min(0).default(0),
		/** Probability that a request with no scripted fault gets one of randomFaults (uniformly). */
		faultRate: z.number().min(0).max(1).default(0),
		randomFaults: faultListSchema.min(1).default(() => [{ status: 500 }]),
		/** Seed for the draws, so a mix can be replayed; default random. */
		faultSeed: z.number().int().optional(),
		/** Profiles that exist at start (and again after reset()), each ID and email once. */
		profiles: z
			.array(profileSchema.extend({ profileId: z.string().min(1) }))
			.superRefine((profiles, ctx) => {
				const seen = new Set();
				for (const { profileId, email } of profiles) {
					for (const [what, value] of [
						['profileId', profileId],
						['email', email],
					]) {
						const key = `${what} ${value.toLowerCase()}`;
						if (seen.has(key)) {
							ctx.addIssue({ code: 'custom', message: `${what} ${value} is seeded twice` });
						}
						seen.add(key);
					}
				}
			})
			.default(() => []),
		/** Lists that exist at start; their profiles take a seeded profile's ID by email. */
		lists: z
			.array(
				z.object({
					listId: z.string().min(1),
					name: z.string().default(''),
					description: z.string().optional(),
					profiles: z.array(profileSchema).default([]),
				}),
			)
			.default(() => []),
		/** Campaigns that exist at start; `recepientList` names seeded lists. */
		campaigns: z
			.array(
				z.object({
					_id: z.string().regex(/^[0-9a-f]{24}$/, '_id must be 24 lower-case hex characters'),
					name: z.string().min(1),
					subject: z.string().min(1),
					content: z.string().optional(),
					recepientList: z.array(z.string()).default(() => []),
				}),
			)
			.default(() => []),
		/** The list IDs field Create Campaign reads; by default the spelling the spec publishes. */
		campaignListField: z.enum(CAMPAIGN_LIST_FIELDS).default('recepientList'),
		/** The clock of the daily quota and of the stored dates. */
		now: /** @type {z.ZodType<() => Date>} */ (isFunction).default(() => () => new Date()),
		/** Called once per request after it was answered (or reset, or left hanging): the CLI's log. */
		onResponse: /** @type {z.ZodType<(entry: ResponseLogEntry) => void>} */ (isFunction).optional(),
	})
	.strict();

/**
 * @typedef {z.input<typeof sandboxOptionsSchema>} SandboxOptions
 * @typedef {z.infer<typeof sandboxOptionsSchema>} ResolvedOptions
 *
 * @typedef {object} RecordedRequest
 * @property {string} method
 * @property {string} path Path without basePath and query (the full path if outside basePath).
 * @property {string} url The request URL as received, query included.
 * @property {Record<string, string | string[] | undefined>} headers Lower-cased header names.
 * @property {unknown} body Parsed JSON, or undefined when empty or not valid JSON.
 * @property {string} receivedAt ISO timestamp.
 * @property {number | 'reset' | 'drop' | 'hang'} [answer] what it got, once answered (a hang: at once)
 *
 * @typedef {{ profileId: string, email: string, firstName?: string, lastName?: string }} StoredProfile
 * @typedef {{ listId: string, name: string, description?: string,
 *   profiles: Map<string, StoredProfile> }} StoredList  profiles keyed by lower-cased email
 * @typedef {{ _id: string, name: string, subject: string, content?: string,
 *   recepientList: string[], createdAt: string }} StoredCampaign  recepientList: list IDs, under
 *   the published spelling whichever spelling the request used
 *
 * @typedef {object} SandboxState
 * @property {Array<{ messageId: string, apiKey: string, queuedAt: string } & Record<string, any>>} emails
 *   Accepted emails (the parsed body), oldest first.
 * @property {Map<string, StoredProfile>} profiles profileId -> the profile as first seen: one
 *   per email (case-insensitive) in the whole account.
 * @property {Map<string, string>} profileIdsByEmail lower-cased email -> profileId.
 * @property {Map<string, StoredList>} lists
 * @property {Map<string, StoredCampaign>} campaigns by _id
 * @property {{ campaignId: string, recipients: string[], sentAt: string }[]} campaignSends
 *   Accepted Send Campaign requests, oldest first, with the emails they went to.
 * @property {Map<string, { day: string, count: number }>} quota API key -> count for a UTC day.
 *
 * @typedef {{ method: string, path: string, status: number | 'reset' | 'drop' | 'hang', durationMs: number,
 *   summary?: string }} ResponseLogEntry  summary: what the request changed that the answer does
 *   not show (new profile IDs, a campaign's recipients); only when handled ('drop' included)
 *
 * @typedef {Awaited<ReturnType<typeof startSandbox>>} SandboxHandle
 */

/** Options that shape the listening server or the seeded state, so they are fixed at start. */
const FIXED_OPTIONS = ['port', 'host', 'basePath', 'profiles', 'lists', 'campaigns'];

/** @type {import('./routes').Reply} */
const INTERNAL_ERROR = {
	status: 500,
	body: { status: 'error', message: 'Internal server error. Please retry later.' },
};
/** @type {import('./routes').Reply} */
const NOT_FOUND = { status: 404, body: { status: 'error', message: 'Not found' } };

// ---------------------------------------------------------------- small I/O helpers

/** @param {http.IncomingMessage} req @returns {Promise<string>} */
async function readBody(req) {
	const chunks = [];
	for await (const chunk of req) chunks.push(chunk);
	return Buffer.concat(chunks).toString('utf8');
}

/**
 * Writes a response; objects are sent as JSON, strings as they are.
 * @param {http.ServerResponse} res @param {number} status @param {unknown} body
 * @param {Record<string, string>} [extraHeaders]
 */
function writeResponse(res, status, body, extraHeaders = {}) {
	if (res.destroyed || res.headersSent) return;
	const isText = typeof body === 'string';
	const payload = body === undefined ? '' : isText ? body : JSON.stringify(body);
	const headers = {
		'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
		'content-length': String(Buffer.byteLength(payload)),
		...Object.fromEntries(Object.entries(extraHeaders).map(([n, v]) => [n.toLowerCase(), v])),
	};
	res.writeHead(status, headers).end(payload);
}

/** The path relative to basePath, or undefined when the request is outside it. @param {string} pathname @param {string} basePath */
const relativePath = (pathname, basePath) =>
	pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : undefined;

// ---------------------------------------------------------------- state

/** @returns {SandboxState} */
const createState = () => ({
	emails: [],
	profiles: new Map(),
	profileIdsByEmail: new Map(),
	lists: new Map(),
	campaigns: new Map(),
	campaignSends: [],
	quota: new Map(),
});

/**
 * Seeded profiles first, so seeded lists find their IDs by email; lists before the campaigns
 * that name them.
 * @param {SandboxState} state
 * @param {ResolvedOptions} options
 */
function seedState(state, { profiles, lists, campaigns, now }) {
	for (const profile of profiles) {
		state.profiles.set(profile.profileId, { ...profile });
		state.profileIdsByEmail.set(profile.email.toLowerCase(), profile.profileId);
	}
	for (const seed of lists) {
		const list = { ...seed, profiles: new Map() };
		addNewProfiles(state, list, seed.profiles);
		state.lists.set(list.listId, list);
	}
	for (const seed of campaigns) {
		const unknownListId = seed.recepientList.find((listId) => !state.lists.has(listId));
		if (unknownListId !== undefined) {
			throw new Error(
				`Seeded campaign ${seed._id} names list ${unknownListId}, which is not seeded`,
			);
		}
		state.campaigns.set(seed._id, {
			...seed,
			recepientList: [...new Set(seed.recepientList)],
			createdAt: now().toISOString(),
		});
	}
}

/** Empties every collection of the state, keeping each object. @param {SandboxState} state */
const clearState = (state) =>
	Object.values(state).forEach((all) => (Array.isArray(all) ? (all.length = 0) : all.clear()));

// ---------------------------------------------------------------- the sandbox

/**
 * Starts a BasicsEngage sandbox server: `baseUrl` (origin + basePath), `requests` (every request
 * received, rejected ones included), `state`, `options` (those in effect).
 * @param {SandboxOptions} [input]
 */
async function startSandbox(input = {}) {
	const initialOptions = sandboxOptionsSchema.parse(input);
	// Parsing again yields fresh arrays and objects, so nothing done later can alter initialOptions.
	let options = sandboxOptionsSchema.parse(initialOptions);

	/** @type {RecordedRequest[]} */
	const requests = [];
	const state = createState();
	seedState(state, options);
	const faults = createFaultQueue({
		faultRate: () => options.faultRate,
		randomFaults: () => options.randomFaults,
		seed: () => options.faultSeed,
	});

	/** How many times reset() ran: a request belongs to the sandbox of its arrival. */
	let generation = 0;
	/** @type {WeakMap<import('node:net').Socket, number>} the generation a connection came in */
	const connectedIn = new WeakMap();
	/** Sockets and timers are tracked so close() can end hanging requests at once. */
	const sockets = new Set();
	/** @type {Set<NodeJS.Timeout>} */
	const timers = new Set();

	/** @param {number} ms @returns {Promise<void>} */
	function sleep(ms) {
		if (ms <= 0) return Promise.resolve();
		return new Promise((resolve) => {
			const timer = setTimeout(() => {
				timers.delete(timer);
				resolve();
			}, ms);
			timers.add(timer);
		});
	}

	/** The normal answer, any exception turned into the spec's 500. @param {RecordedRequest} request @param {string | undefined} routePath */
	function routeReply(request, routePath) {
		const route = routePath === undefined ? undefined : ROUTES[`${request.method} ${routePath}`];
		if (!route) return NOT_FOUND;
		try {
			return route(request, { options, state });
		} catch {
			return INTERNAL_ERROR;
		}
	}

	/**
	 * Answers one request; returns what happened, for the log.
	 * @param {RecordedRequest} request @param {string | undefined} routePath under basePath
	 * @param {http.IncomingMessage} req @param {http.ServerResponse} res
	 * @returns {Promise<Pick<ResponseLogEntry, 'status' | 'summary'>>}
	 */
	async function respond(request, routePath, req, res) {
		const arrivedIn = generation;
		await sleep(options.latencyMs);
		// Its test ended while it waited (reset()): it must not change the next test's state.
		if (arrivedIn !== generation) {
			req.socket.destroy();
			return { status: 'reset' };
		}
		const fault = faults.take(routePath);
		if (fault) {
			await sleep(fault.delayMs ?? 0);
			if (fault.action === 'reset') {
				req.socket.resetAndDestroy();
				return { status: 'reset' };
			}
			if (fault.action === 'hang') return { status: 'hang' };
			if (fault.action === 'drop') {
				const { summary } = routeReply(request, routePath);
				req.socket.resetAndDestroy();
				return { status: 'drop', summary };
			}
			if (fault.status !== undefined) {
				writeResponse(
					res,
					fault.status,
					fault.body ?? defaultFaultBody(fault.status),
					fault.headers,
				);
				return { status: fault.status };
			}
		}
		const reply = routeReply(request, routePath);
		writeResponse(res, reply.status, reply.body);
		return { status: reply.status, summary: reply.summary };
	}

	/** @param {http.IncomingMessage} req @param {http.ServerResponse} res */
	async function handleRequest(req, res) {
		const startedAt = Date.now();
		// A connection's first request dates from the connection: its bytes can wait unread
		// while the process is busy. Later requests on a kept-alive connection date from themselves.
		const arrivedIn = connectedIn.get(req.socket) ?? generation;
		connectedIn.delete(req.socket);
		const rawBody = await readBody(req);
		// A request that arrived before reset() belongs to the sandbox it was sent to: one whose
		// client gave up (a timeout) can be read only after its test ended, and must not count as
		// a request of the next test, nor change its state.
		if (arrivedIn !== generation) {
			req.socket.destroy();
			return;
		}
		const pathname = new URL(req.url ?? '/', 'http://sandbox').pathname;
		const routePath = relativePath(pathname, options.basePath);
		let body;
		try {
			body = JSON.parse(rawBody);
		} catch {
			// undefined: not JSON
		}
		/** @type {RecordedRequest} */
		const request = {
			method: req.method ?? 'GET',
			path: routePath ?? pathname,
			url: req.url ?? '/',
			headers: { ...req.headers },
			body,
			receivedAt: new Date().toISOString(),
		};
		requests.push(request);
		const { status, summary } = await respond(request, routePath, req, res);
		request.answer = status;
		try {
			options.onResponse?.({
				method: request.method,
				path: request.path,
				status,
				durationMs: Date.now() - startedAt,
				...(summary === undefined ? {} : { summary }),
			});
		} catch {
			// A failing logger must not break the sandbox.
		}
	}

	const server = http.createServer((req, res) => {
		handleRequest(req, res).catch(() =>
			writeResponse(res, INTERNAL_ERROR.status, INTERNAL_ERROR.body),
		);
	});
	server.on('connection', (socket) => {
		connectedIn.set(socket, generation);
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});

	await new Promise((resolve, reject) => {
		server.once('error', reject).listen(options.port, options.host, () => {
			server.off('error', reject);
			resolve(undefined);
		});
	});

	const address = /** @type {import('node:net').AddressInfo} */ (server.address());
	const origin = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${address.port}`;
	/** @type {Promise<void> | undefined} */
	let closing;

	return {
		port: address.port,
		origin,
		baseUrl: `${origin}${options.basePath}`,
		requests,
		state,
		get options() {
			return options;
		},
		/** Back to the state right after start: options, seeded state, quota, requests, faults. */
		reset() {
			generation += 1;
			requests.length = 0;
			faults.clear();
			options = sandboxOptionsSchema.parse(initialOptions);
			clearState(state);
			seedState(state, options);
		},
		/** Changes options until the next reset(). @param {Partial<SandboxOptions>} partial */
		setOptions(partial) {
			const fixed = Object.keys(partial).filter((key) => FIXED_OPTIONS.includes(key));
			if (fixed.length > 0) throw new Error(`Cannot change ${fixed.join(', ')} after start`);
			options = sandboxOptionsSchema.parse({ ...options, ...partial });
		},
		/** @param {import('./faults').Fault | import('./faults').Fault[]} newFaults */
		injectFaults: (newFaults) => faults.add(newFaults),
		/** Drops the scripted faults not consumed yet. */
		clearFaults: () => faults.clear(),
		/** Stops the server, dropping open and hanging connections. @returns {Promise<void>} */
		close() {
			closing ??= new Promise((resolve) => {
				for (const timer of timers) clearTimeout(timer);
				timers.clear();
				for (const socket of sockets) socket.destroy();
				server.close(() => resolve());
			});
			return closing;
		},
	};
}

module.exports = { startSandbox, DEMO_API_KEY, LIST_AUTH_HEADERS, CAMPAIGN_LIST_FIELDS };
