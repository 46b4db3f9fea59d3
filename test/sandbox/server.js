// @ts-check
'use strict';

/** The BasicsEngage API as published, for tests and demos; ./README.md lists its choices where the spec is silent. */

const { once } = require('node:events');
const http = require('node:http');
const { z } = require('zod');
const { answer, errorBody, PATHS, profileSchema, addNewProfiles } = require('./routes');

const DEMO_API_KEY = 'be_sandbox_demo_key';
const LIST_AUTH_HEADERS = /** @type {const} */ (['Authroization', 'Authorization', 'either']);
const CAMPAIGN_LIST_FIELDS = /** @type {const} */ (['recepientList', 'recipientList', 'either']);
const BASE_PATH = '/api/v0/dev';

// Faults as ./README.md describes them: a queue, one taken per matching request before the
// routes, else maybe a random one.
const faultListSchema = z.array(
	z
		.object({
			path: z.enum(/** @type {[string, ...string[]]} */ (PATHS)).optional(),
			status: z.number().int().min(100).max(599).optional(),
			body: z
				.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
				.optional(),
			headers: z.record(z.string(), z.string()).optional(),
			applied: z.boolean().optional(),
			action: z.enum(['reset', 'drop', 'hang', 'delay', 'drip']).optional(),
			delayMs: z.number().int().min(0).optional(),
		})
		.strict(),
);
/** @typedef {z.input<typeof faultListSchema>[number]} Fault */

/** mulberry32: a small seeded generator, so a fault mix can be replayed. @param {number} seed */
function seededRandom(seed) {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** @param {() => ResolvedOptions} current the options in effect, read at each draw */
function createFaultQueue(current) {
	/** @type {Fault[]} */
	const queue = [];
	/** @type {number | undefined} */
	let seeded;
	let draw = Math.random;
	const random = () => {
		const seed = current().faultSeed;
		if (seed !== seeded) {
			seeded = seed;
			draw = seed === undefined ? Math.random : seededRandom(seed);
		}
		return draw();
	};

	return {
		/** @param {Fault | Fault[]} faults */
		add(faults) {
			queue.push(...faultListSchema.parse(Array.isArray(faults) ? faults : [faults]));
		},
		/** The first fault for this path (undefined: outside basePath), else maybe a random one. @param {string | undefined} path @returns {Fault | undefined} */
		take(path) {
			const index = queue.findIndex((fault) => fault.path === undefined || fault.path === path);
			if (index >= 0) return queue.splice(index, 1)[0];
			const { faultRate, randomFaults } = current();
			if (faultRate > 0 && random() < faultRate) {
				return randomFaults[Math.floor(random() * randomFaults.length)];
			}
			return undefined;
		},
		/** Drops the scripted faults; the next draw starts its seed's sequence again. */
		clear() {
			queue.length = 0;
			seeded = Number.NaN;
		},
	};
}

const isFunction = z.custom((value) => typeof value === 'function', 'must be a function');
const seededList = z.object({
	listId: z.string().min(1),
	name: z.string().default(''),
	description: z.string().optional(),
	profiles: z.array(profileSchema).default([]),
});
const seededCampaign = z.object({
	_id: z.string().regex(/^[0-9a-f]{24}$/, '_id must be 24 lower-case hex characters'),
	name: z.string().min(1),
	subject: z.string().min(1),
	content: z.string().optional(),
	recepientList: z.array(z.string()).default(() => []),
});

/** Each option with its default, as ./README.md lists them. */
const sandboxOptionsSchema = z
	.object({
		port: z.number().int().min(0).max(65535).default(0),
		host: z.string().min(1).default('127.0.0.1'),
		apiKeys: z.array(z.string().min(1)).default(() => [DEMO_API_KEY]),
		dailyLimit: z.number().int().min(0).default(100),
		templates: z
			.record(z.string(), z.array(z.string()))
			.default(() => ({ tmpl_welcome: ['firstName', 'company'] })),
		verifiedSenders: z
			.array(z.string())
			.nullable()
			.default(() => ['hello@example.com', 'noreply@example.com']),
		listAuthHeader: z.enum(LIST_AUTH_HEADERS).default('Authroization'),
		latencyMs: z.number().int().min(0).default(0),
		faultRate: z.number().min(0).max(1).default(0),
		randomFaults: faultListSchema.min(1).default(() => [{ status: 500 }]),
		faultSeed: z.number().int().optional(),
		profiles: z.array(profileSchema.extend({ profileId: z.string().min(1) })).default(() => []),
		lists: z.array(seededList).default(() => []),
		campaigns: z.array(seededCampaign).default(() => []),
		campaignListField: z.enum(CAMPAIGN_LIST_FIELDS).default('recepientList'),
		now: /** @type {z.ZodType<() => Date>} */ (isFunction).default(() => () => new Date()),
		onResponse: /** @type {z.ZodType<(entry: ResponseLogEntry) => void>} */ (isFunction).optional(),
	})
	.strict();

/**
 * @typedef {z.input<typeof sandboxOptionsSchema>} SandboxOptions
 * @typedef {z.infer<typeof sandboxOptionsSchema>} ResolvedOptions
 * @typedef {ReturnType<typeof createState>} SandboxState
 * @typedef {Awaited<ReturnType<typeof startSandbox>>} SandboxHandle
 * @typedef {number | 'reset' | 'drop' | 'hang' | 'drip'} Outcome
 * @typedef {{ method: string, path: string, url: string, headers: http.IncomingHttpHeaders, body: any, receivedAt: string, answer?: Outcome }} RecordedRequest  path: under basePath; body: the JSON as sent (undefined when not JSON), read by tests as they expect it
 * @typedef {{ method: string, path: string, status: Outcome, durationMs: number, summary?: string }} ResponseLogEntry  summary: what the request changed, unseen in the answer
 * @typedef {{ profileId: string, email: string, firstName?: string, lastName?: string }} StoredProfile
 * @typedef {{ listId: string, name: string, description?: string, profiles: Map<string, StoredProfile> }} StoredList  profiles by lower-cased email
 */

/** Options that shape the listening server or the seeded state. */
const FIXED_OPTIONS = ['port', 'host', 'profiles', 'lists', 'campaigns'];

/** Objects as JSON, strings as they are. @param {unknown} body @param {Record<string, string>} [extraHeaders] */
function encode(body, extraHeaders = {}) {
	const isText = typeof body === 'string';
	const payload = Buffer.from(body === undefined ? '' : isText ? body : JSON.stringify(body));
	const headers = {
		'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
		'content-length': String(payload.length),
		...Object.fromEntries(Object.entries(extraHeaders).map(([n, v]) => [n.toLowerCase(), v])),
	};
	return { payload, headers };
}

/** @param {http.ServerResponse} res @param {number} status @param {unknown} body @param {Record<string, string>} [extraHeaders] */
function writeResponse(res, status, body, extraHeaders) {
	if (res.destroyed || res.headersSent) return;
	const { payload, headers } = encode(body, extraHeaders);
	res.writeHead(status, headers).end(payload);
}

const createState = () => ({
	/** @type {Array<{ messageId: string, apiKey: string, queuedAt: string } & Record<string, any>>} */
	emails: [],
	/** @type {Map<string, StoredProfile>} by profileId: one per email in the account */
	profiles: new Map(),
	/** @type {Map<string, string>} lower-cased email -> profileId */
	profileIdsByEmail: new Map(),
	/** @type {Map<string, StoredList>} */
	lists: new Map(),
	/** @type {Map<string, { _id: string, name: string, subject: string, content?: string, recepientList: string[], createdAt: string }>} */
	campaigns: new Map(),
	/** @type {{ campaignId: string, recipients: string[], sentAt: string }[]} */
	campaignSends: [],
	/** @type {Map<string, { day: string, count: number }>} API key -> its count on a UTC day */
	quota: new Map(),
});

/** Profiles first, so lists find their IDs by email; lists before the campaigns naming them. @param {SandboxState} state @param {ResolvedOptions} options */
function seedState(state, { profiles, lists, campaigns, now }) {
	for (const profile of profiles) {
		const email = profile.email.toLowerCase();
		const twice = state.profiles.has(profile.profileId)
			? `profileId ${profile.profileId}`
			: state.profileIdsByEmail.has(email) && `email ${profile.email}`;
		if (twice) throw new Error(`${twice} is seeded twice`);
		state.profiles.set(profile.profileId, { ...profile });
		state.profileIdsByEmail.set(email, profile.profileId);
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
		const recepientList = [...new Set(seed.recepientList)];
		state.campaigns.set(seed._id, { ...seed, recepientList, createdAt: now().toISOString() });
	}
}

/** A started sandbox: `requests` holds every request, rejected ones too. @param {SandboxOptions} [input] */
async function startSandbox(input = {}) {
	const initialOptions = sandboxOptionsSchema.parse(input);
	// Parsing again yields fresh arrays and objects, so later changes cannot alter initialOptions.
	let options = sandboxOptionsSchema.parse(initialOptions);

	/** @type {RecordedRequest[]} */
	const requests = [];
	const state = createState();
	seedState(state, options);
	const faults = createFaultQueue(() => options);

	/** How many times reset() ran: a request belongs to the sandbox of its arrival. */
	let generation = 0;
	/** @type {WeakMap<import('node:net').Socket, number>} */
	const connectedIn = new WeakMap();
	// Tracked so close() can end hanging requests at once.
	const sockets = new Set();
	/** @type {Set<NodeJS.Timeout>} */
	const timers = new Set();

	/** @param {number} ms @returns {Promise<void>} */
	const sleep = (ms) =>
		new Promise((resolve) => {
			if (ms <= 0) return resolve();
			const timer = setTimeout(() => {
				timers.delete(timer);
				resolve();
			}, ms);
			timers.add(timer);
		});

	/** @param {RecordedRequest} request @param {string | undefined} routePath @param {http.IncomingMessage} req @param {http.ServerResponse} res @returns {Promise<{ status: Outcome, summary?: string }>} */
	async function respond(request, routePath, req, res) {
		const arrivedIn = generation;
		await sleep(options.latencyMs);
		// Its test ended while it waited: it must not change the next test's state.
		if (arrivedIn !== generation) {
			req.socket.destroy();
			return { status: 'reset' };
		}
		const fault = faults.take(routePath);
		if (fault?.action === 'drip') {
			const reply = answer(request, routePath, { options, state });
			const { payload, headers } = encode(reply.body);
			res.writeHead(reply.status, headers);
			const size = Math.ceil(payload.length / 10);
			for (let piece = 0; piece < 9 && !res.destroyed; piece++) {
				res.write(payload.subarray(piece * size, (piece + 1) * size));
				await sleep(fault.delayMs ?? 0);
			}
			res.end(payload.subarray(9 * size));
			return { status: 'drip', summary: reply.summary };
		}
		await sleep(fault?.delayMs ?? 0);
		if (fault?.action === 'reset') {
			req.socket.resetAndDestroy();
			return { status: 'reset' };
		}
		if (fault?.action === 'hang') return { status: 'hang' };
		if (fault?.action === 'drop') {
			const { summary } = answer(request, routePath, { options, state });
			req.socket.resetAndDestroy();
			return { status: 'drop', summary };
		}
		if (fault?.status !== undefined) {
			const summary = fault.applied
				? answer(request, routePath, { options, state }).summary
				: undefined;
			const body = fault.body ?? errorBody(fault.status);
			writeResponse(res, fault.status, body, fault.headers);
			return { status: fault.status, summary };
		}
		const reply = answer(request, routePath, { options, state });
		writeResponse(res, reply.status, reply.body);
		return { status: reply.status, summary: reply.summary };
	}

	/** @param {http.IncomingMessage} req @param {http.ServerResponse} res */
	async function handleRequest(req, res) {
		const startedAt = Date.now();
		// A connection's first request dates from the connection (its bytes may wait unread while
		// the process is busy); later ones on a kept-alive connection date from themselves.
		const arrivedIn = connectedIn.get(req.socket) ?? generation;
		connectedIn.delete(req.socket);
		const chunks = [];
		for await (const chunk of req) chunks.push(chunk);
		// Sent before reset() (say by a client that gave up): not a request of the next test.
		if (arrivedIn !== generation) {
			req.socket.destroy();
			return;
		}
		const { pathname } = new URL(req.url ?? '/', 'http://sandbox');
		const routePath = pathname.startsWith(`${BASE_PATH}/`)
			? pathname.slice(BASE_PATH.length)
			: undefined;
		let body;
		try {
			body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
		} catch {} // not JSON: undefined
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
		const durationMs = Date.now() - startedAt;
		const entry = { method: request.method, path: request.path, status, durationMs };
		try {
			options.onResponse?.(summary === undefined ? entry : { ...entry, summary });
		} catch {} // a failing logger must not break the sandbox
	}

	const server = http.createServer((req, res) => {
		handleRequest(req, res).catch(() => writeResponse(res, 500, errorBody(500)));
	});
	server.on('connection', (socket) => {
		connectedIn.set(socket, generation);
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	server.listen(options.port, options.host);
	await once(server, 'listening');

	const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
	const origin = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
	/** @type {Promise<void> | undefined} */
	let closing;

	return {
		port,
		origin,
		baseUrl: `${origin}${BASE_PATH}`,
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
			for (const all of Object.values(state)) all instanceof Map ? all.clear() : (all.length = 0);
			seedState(state, options);
		},
		/** Changes options until the next reset(). @param {Partial<SandboxOptions>} partial */
		setOptions(partial) {
			const fixed = Object.keys(partial).filter((key) => FIXED_OPTIONS.includes(key));
			if (fixed.length > 0) throw new Error(`Cannot change ${fixed.join(', ')} after start`);
			options = sandboxOptionsSchema.parse({ ...options, ...partial });
		},
		/** @param {Fault | Fault[]} newFaults */
		injectFaults: (newFaults) => faults.add(newFaults),
		/** Drops the scripted faults not taken yet. */
		clearFaults: () => faults.clear(),
		/** Stops the server, dropping open and hanging connections. @returns {Promise<void>} */
		close() {
			closing ??= new Promise((resolve) => {
				for (const timer of timers) clearTimeout(timer);
				for (const socket of sockets) socket.destroy();
				server.close(() => resolve());
			});
			return closing;
		},
	};
}

module.exports = { startSandbox, DEMO_API_KEY, LIST_AUTH_HEADERS, CAMPAIGN_LIST_FIELDS };
