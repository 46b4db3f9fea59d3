// @ts-check
'use strict';

/**
 * Scripted faults: a queue consumed one fault per matching request, before the
 * request reaches the routes. With `faultRate`, a request the queue has nothing for
 * gets one of `randomFaults` (default a 500) at that rate; `faultSeed` makes the
 * draw repeatable.
 */

const { STATUS_CODES } = require('node:http');
const { MESSAGES, faultListSchema } = require('./schemas');

/**
 * @typedef {object} Fault
 * @property {import('./schemas').RoutePath} [path] only requests to this path consume it; omit = any request
 * @property {number} [status] answer this status (with `body`, `headers`) without touching state
 * @property {string | object} [body] response body; objects are JSON-encoded. Default: the spec's error body for the status
 * @property {Record<string, string>} [headers] extra response headers
 * @property {'reset' | 'drop' | 'hang' | 'delay'} [action] reset = destroy the socket with no response, before
 *   handling; drop = handle the request (it takes effect) but destroy the socket instead of answering;
 *   hang = never answer; delay = wait `delayMs`, then continue
 * @property {number} [delayMs] wait this long before acting (or before normal handling)
 */

/**
 * The error body the spec publishes for a status, so a bare `{ status: 500 }` fault looks real.
 * @param {number} status
 * @returns {object | undefined}
 */
function defaultFaultBody(status) {
	if (status < 400) return undefined;
	if (status === 429) return { status: 'error', error: MESSAGES.quotaExceeded };
	if (status === 401) return { status: 'error', message: MESSAGES.invalidApiKey };
	if (status === 500) return { status: 'error', message: MESSAGES.internalError };
	return { status: 'error', message: STATUS_CODES[status] ?? 'Error' };
}

/**
 * A small seeded generator (mulberry32), so a fault mix can be replayed exactly.
 * @param {number} seed
 */
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

/**
 * @param {{ faultRate: () => number, randomFaults: () => Fault[], seed: () => number | undefined }} settings
 *   read at each draw, so options changed after start (setOptions) apply; a new seed starts its
 *   own sequence, so a test that sets one replays the same draws
 */
function createFaultQueue(settings) {
	/** @type {Fault[]} */
	const queue = [];
	/** @type {number | undefined} */
	let seeded;
	let draw = Math.random;
	const random = () => {
		const seed = settings.seed();
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
		/**
		 * Removes and returns the first fault for this path, or a random one.
		 * @param {string | undefined} path request path under basePath; undefined outside it (only path-less faults apply)
		 * @returns {Fault | undefined}
		 */
		take(path) {
			const index = queue.findIndex((fault) => fault.path === undefined || fault.path === path);
			if (index >= 0) return queue.splice(index, 1)[0];
			const rate = settings.faultRate();
			if (rate > 0 && random() < rate) {
				const mix = settings.randomFaults();
				return mix[Math.floor(random() * mix.length)];
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

module.exports = { createFaultQueue, defaultFaultBody };
