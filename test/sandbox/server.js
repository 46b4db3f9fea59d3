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
const { sandboxOptionsSchema, MESSAGES } = require('./schemas');
const { DOWNLOADS, ROUTES, addNewProfiles } = require('./routes');
const { createFaultQueue, defaultFaultBody } = require('./faults');

/**
 * @typedef {object} SandboxOptions
 * @property {number} [port] TCP port; 0 picks a free one. Default 0.
 * @property {string} [host] Interface to bind. Default '127.0.0.1'.
 * @property {string} [basePath] Path prefix of every route. Default '/api/v0/dev'.
 * @property {string[]} [apiKeys] Accepted API keys. Default ['be_sandbox_demo_key'].
 * @property {number} [dailyLimit] Emails per API key per UTC day. Default 100.
 * @property {Record<string, string[]>} [templates] templateId -> its variable names.
 *   Default { tmpl_welcome: ['firstName', 'company'] }.
 * @property {string[] | null} [verifiedSenders] Accepted `from` addresses (case-insensitive);
 *   null accepts any sender. Default ['hello@example.com', 'noreply@example.com'].
 * @property {'Authroization' | 'Authorization' | 'either'} [listAuthHeader] Header the list
 *   operation reads the key from. Default 'Authroization', the spelling the spec publishes.
 * @property {number} [latencyMs] Delay before answering every request. Default 0.
 * @property {number} [faultRate] Probability (0..1) that a request with no scripted fault
 *   gets one of `randomFaults`. Default 0.
 * @property {import('./faults').Fault[]} [randomFaults] The faults `faultRate` draws from,
 *   uniformly. Default [{ status: 500 }].
 * @property {number} [faultSeed] Seed for the draws, so a mix can be replayed. Default random.
 * @property {{ profileId: string, email: string, firstName?: string, lastName?: string }[]} [profiles]
 *   Profiles that exist at start (and again after reset()), with the IDs Create List accepts.
 *   Default [].
 * @property {{ listId: string, name?: string, description?: string,
 *   profiles?: { email: string, firstName?: string, lastName?: string }[] }[]} [lists]
 *   Lists that exist at start (and again after reset()). Their profiles take the profileId of a
 *   seeded profile with the same email, else a new one. Default [].
 * @property {{ _id: string, name: string, subject: string, content?: string,
 *   recepientList?: string[] }[]} [campaigns] Campaigns that exist at start (and again after
 *   reset()); `_id` is 24 hex characters, `recepientList` names seeded lists. Default [].
 * @property {'recepientList' | 'recipientList' | 'either'} [campaignListField] The spelling of
 *   the list IDs field Create Campaign reads; the other is ignored like any unknown field.
 *   Default 'recepientList', the spelling the spec publishes.
 * @property {() => Date} [now] Clock used for the daily quota. Default () => new Date().
 * @property {(entry: ResponseLogEntry) => void} [onResponse] Called once per request after it
 *   was answered (or reset, or left hanging). Used by the CLI to log.
 */

/**
 * @typedef {import('zod').infer<typeof sandboxOptionsSchema>} ResolvedOptions
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
 * @typedef {{ messageId: string, apiKey: string, to: string, from: string, subject: string,
 *   html?: string, text?: string, templateId?: string, templateVariables?: Record<string, string>,
 *   queuedAt: string }} QueuedEmail
 * @typedef {{ _id: string, name: string, subject: string, content?: string,
 *   recepientList: string[], createdAt: string }} StoredCampaign  recepientList: list IDs, under
 *   the published spelling whichever spelling the request used
 * @typedef {{ campaignId: string, recipients: string[], sentAt: string }} CampaignSend  recipients:
 *   the emails the campaign went to
 *
 * @typedef {object} SandboxState
 * @property {QueuedEmail[]} emails Accepted emails, oldest first.
 * @property {Map<string, StoredProfile>} profiles profileId -> the profile as first seen: one
 *   per email (case-insensitive) in the whole account.
 * @property {Map<string, string>} profileIdsByEmail lower-cased email -> profileId (index of `profiles`).
 * @property {Map<string, StoredList>} lists listId -> list.
 * @property {Map<string, StoredCampaign>} campaigns _id -> campaign.
 * @property {CampaignSend[]} campaignSends Accepted Send Campaign requests, oldest first.
 * @property {Map<string, { day: string, count: number }>} quota API key -> count for a UTC day.
 *
 * @typedef {{ method: string, path: string, status: number | 'reset' | 'drop' | 'hang', durationMs: number,
 *   summary?: string }} ResponseLogEntry  summary: what the request changed that the answer does
 *   not show (new profile IDs, a campaign's recipients); only when handled ('drop' included)
 *
 * @typedef {object} SandboxHandle
 * @property {number} port
 * @property {string} origin e.g. 'http://127.0.0.1:4010'
 * @property {string} baseUrl origin + basePath
 * @property {RecordedRequest[]} requests Every request received, rejected ones included.
 * @property {SandboxState} state
 * @property {ResolvedOptions} options The options in effect (read-only view).
 * @property {() => void} reset Back to the state right after start: options, profiles, lists,
 *   campaigns, campaign sends, quota, requests, faults.
 * @property {(partial: SandboxOptions) => void} setOptions Changes options until the next reset().
 * @property {(faults: import('./faults').Fault | import('./faults').Fault[]) => void} injectFaults
 * @property {() => void} clearFaults Drops the scripted faults not consumed yet.
 * @property {() => Promise<void>} close Stops the server, dropping open and hanging connections.
 */

/** Options that shape the listening server or the seeded state, so they are fixed at start. */
const FIXED_OPTIONS = ['port', 'host', 'basePath', 'profiles', 'lists', 'campaigns'];

/** @type {import('./routes').Reply} */
const INTERNAL_ERROR = { status: 500, body: { status: 'error', message: MESSAGES.internalError } };
/** @type {import('./routes').Reply} */
const NOT_FOUND = { status: 404, body: { status: 'error', message: MESSAGES.notFound } };

// ---------------------------------------------------------------- small I/O helpers

/** @param {http.IncomingMessage} req @returns {Promise<string>} */
function readBody(req) {
	return new Promise((resolve, reject) => {
		/** @type {Buffer[]} */
		const chunks = [];
		req.on('data', (chunk) => chunks.push(chunk));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', reject);
	});
}

/** @param {string} rawBody */
function parseJson(rawBody) {
	try {
		return JSON.parse(rawBody);
	} catch {
		return undefined;
	}
}

/**
 * Writes a response; objects are sent as JSON, strings as they are.
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [extraHeaders]
 */
function writeResponse(res, status, body, extraHeaders = {}) {
	if (res.destroyed || res.headersSent) return;
	const isText = typeof body === 'string';
	const payload = body === undefined ? '' : isText ? body : JSON.stringify(body);
	const headers = {
		'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
		'content-length': String(Buffer.byteLength(payload)),
		...lowerCaseKeys(extraHeaders),
	};
	res.writeHead(status, headers).end(payload);
}

/** @param {Record<string, string>} headers */
const lowerCaseKeys = (headers) =>
	Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/**
 * The path relative to basePath, or undefined when the request is outside it.
 * @param {string} pathname
 * @param {string} basePath
 */
function relativePath(pathname, basePath) {
	if (!pathname.startsWith(`${basePath}/`)) return undefined;
	return pathname.slice(basePath.length);
}

/** @param {string} host */
const hostForUrl = (host) => (host.includes(':') ? `[${host}]` : host);

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
		/** @type {StoredList} */
		const list = {
			listId: seed.listId,
			name: seed.name,
			description: seed.description,
			profiles: new Map(),
		};
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

/** @param {SandboxState} state */
function clearState(state) {
	state.emails.length = 0;
	state.profiles.clear();
	state.profileIdsByEmail.clear();
	state.lists.clear();
	state.campaigns.clear();
	state.campaignSends.length = 0;
	state.quota.clear();
}

// ---------------------------------------------------------------- the sandbox

/**
 * Starts a BasicsEngage sandbox server.
 * @param {SandboxOptions} [input]
 * @returns {Promise<SandboxHandle>}
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

	/**
	 * @param {http.IncomingMessage} req
	 * @param {string} rawBody
	 * @param {string} pathname
	 * @returns {RecordedRequest}
	 */
	function recordRequest(req, rawBody, pathname) {
		const request = {
			method: req.method ?? 'GET',
			path: relativePath(pathname, options.basePath) ?? pathname,
			url: req.url ?? '/',
			headers: { ...req.headers },
			body: parseJson(rawBody),
			receivedAt: new Date().toISOString(),
		};
		requests.push(request);
		return request;
	}

	/**
	 * The normal answer: route lookup, with any exception turned into the spec's 500.
	 * @param {RecordedRequest} request
	 * @param {string | undefined} routePath
	 */
	function routeReply(request, routePath) {
		const key = `${request.method} ${routePath}`;
		const route = routePath === undefined ? undefined : (ROUTES[key] ?? DOWNLOADS[key]);
		if (!route) return NOT_FOUND;
		try {
			return route(request, { options, state });
		} catch {
			return INTERNAL_ERROR;
		}
	}

	/**
	 * Answers one request; returns what happened, for the log.
	 * @param {RecordedRequest} request
	 * @param {string | undefined} routePath path under basePath, undefined when outside it
	 * @param {http.IncomingMessage} req
	 * @param {http.ServerResponse} res
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
		const request = recordRequest(req, rawBody, pathname);
		const { status, summary } = await respond(
			request,
			relativePath(pathname, options.basePath),
			req,
			res,
		);
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
		server.once('error', reject);
		server.listen(options.port, options.host, () => {
			server.off('error', reject);
			resolve(undefined);
		});
	});

	const address = /** @type {import('node:net').AddressInfo} */ (server.address());
	const origin = `http://${hostForUrl(options.host)}:${address.port}`;
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
		reset() {
			generation += 1;
			requests.length = 0;
			faults.clear();
			options = sandboxOptionsSchema.parse(initialOptions);
			clearState(state);
			seedState(state, options);
		},
		setOptions(partial) {
			const fixed = Object.keys(partial).filter((key) => FIXED_OPTIONS.includes(key));
			if (fixed.length > 0) throw new Error(`Cannot change ${fixed.join(', ')} after start`);
			options = sandboxOptionsSchema.parse({ ...options, ...partial });
		},
		injectFaults(newFaults) {
			faults.add(newFaults);
		},
		clearFaults: () => faults.clear(),
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

module.exports = { startSandbox };
