// @ts-check
'use strict';

/** Faults: a queue, one taken per matching request before the routes, else maybe a random one. */

const { z } = require('zod');
const { PATHS } = require('./routes');

const faultListSchema = z.array(
	z
		.object({
			/** Only requests to this path (under basePath) take it; omitted: any request. */
			path: z.enum(/** @type {[string, ...string[]]} */ (PATHS)).optional(),
			/** Answer this status without touching state; by default with the spec's body for it. */
			status: z.number().int().min(100).max(599).optional(),
			/** Objects are JSON-encoded. */
			body: z
				.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
				.optional(),
			headers: z.record(z.string(), z.string()).optional(),
			/** reset: no answer, nothing done; drop: done, not answered; hang: never answered; delay: delayMs only. */
			action: z.enum(['reset', 'drop', 'hang', 'delay']).optional(),
			/** Wait this long before acting (or before normal handling). */
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

/** @param {{ faultRate: () => number, randomFaults: () => Fault[], seed: () => number | undefined }} settings read at each draw, so setOptions() applies */
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
		/** The first fault for this path (undefined: outside basePath), else maybe a random one. @param {string | undefined} path @returns {Fault | undefined} */
		take(path) {
			const index = queue.findIndex((fault) => fault.path === undefined || fault.path === path);
			if (index >= 0) return queue.splice(index, 1)[0];
			if (settings.faultRate() > 0 && random() < settings.faultRate()) {
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

module.exports = { createFaultQueue, faultListSchema };
