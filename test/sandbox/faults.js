// @ts-check
'use strict';

/**
 * Scripted faults: a queue consumed one fault per matching request, before the
 * request reaches the routes. With `faultRate`, a request the queue has nothing for
 * gets one of `randomFaults` (default a 500) at that rate; `faultSeed` makes the
 * draw repeatable.
 */

const { STATUS_CODES } = require('node:http');
const { z } = require('zod');

const faultListSchema = z.array(
	z
		.object({
			/** Only requests to this path (under basePath) consume it; omitted: any request. */
			path: z
				.enum([
					'/email/send',
					'/list/addProfiles',
					'/list/create',
					'/campaign/create',
					'/campaign/send',
				])
				.optional(),
			/** Answer this status (with `body`, `headers`) without touching state. */
			status: z.number().int().min(100).max(599).optional(),
			/** Objects are JSON-encoded; by default the spec's error body for the status. */
			body: z
				.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
				.optional(),
			headers: z.record(z.string(), z.string()).optional(),
			/**
			 * reset: destroy the socket with no answer, before handling; drop: handle the request (it
			 * takes effect) but destroy the socket instead of answering; hang: never answer; delay:
			 * wait `delayMs`, then go on.
			 */
			action: z.enum(['reset', 'drop', 'hang', 'delay']).optional(),
			/** Wait this long before acting (or before normal handling). */
			delayMs: z.number().int().min(0).optional(),
		})
		.strict(),
);
/** @typedef {z.input<typeof faultListSchema>[number]} Fault */

/**
 * The error body the spec publishes for a status, so a bare `{ status: 500 }` fault looks real.
 * @param {number} status
 * @returns {object | undefined}
 */
function defaultFaultBody(status) {
	if (status < 400) return undefined;
	if (status === 429)
		return { status: 'error', error: 'Daily email quota exceeded. Please try again tomorrow.' };
	if (status === 401) return { status: 'error', message: 'Invalid API key' };
	if (status === 500)
		return { status: 'error', message: 'Internal server error. Please retry later.' };
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

module.exports = { createFaultQueue, defaultFaultBody, faultListSchema };
