// Numbered steps for long runs (the first `npm run dev` installs n8n: minutes), so a person sees
// what is being done, for how long, and about how much is left:
//   step 3 of 5: installing n8n 2.41.1 (first time only): 1m10s elapsed, about 1m10s left in
//     this step, about 2m55s until all 5 steps are done (estimates) · 2100 of 2232 packages fetched
// Both times are counted from now: the second is what is left of this step plus the usual
// durations of the steps after it. They are estimates from durations measured before
// (dev/provision.mjs, RUNTIMES[...].typicalMs), said as such; a step that runs over its estimate
// says so instead of counting below zero.
// Plain Node ESM, no dependencies.

/** 65_000 -> "1m05s", 9_400 -> "9s". */
export function formatDuration(ms) {
	const s = Math.max(0, Math.round(ms / 1000));
	return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** An estimate, rounded to 5 s: 93_000 -> "1m35s". */
export function roughDuration(ms) {
	return formatDuration(Math.round(ms / 5_000) * 5_000);
}

/**
 * @param {object} options
 * @param {{ id: string, label: string, note?: string, short?: string, typicalMs?: number }[]} options.steps
 *   the steps this run will take, in order (`note`: said in brackets when the step begins;
 *   `short`: the label of its progress lines)
 * @param {(message: string) => void} options.say prints one line
 * @param {number} [options.tickMs] how often a running step prints its progress line (10 s)
 */
export function createSteps({ steps, say, tickMs = 10_000 }) {
	const plan = steps.filter(Boolean);
	let current;
	let timer;

	const leftAfter = (index) =>
		plan.slice(index + 1).reduce((sum, step) => sum + (step.typicalMs ?? 0), 0);
	const name = (step) =>
		step.index === undefined ? step.short ?? step.label : `step ${step.index + 1} of ${plan.length}: ${step.short ?? step.label}`;

	function progressLine(step) {
		const elapsed = Date.now() - step.started;
		const parts = [`${formatDuration(elapsed)} elapsed`];
		if (step.typicalMs) {
			const left = step.typicalMs - elapsed;
			const later = step.index === undefined ? 0 : leftAfter(step.index);
			if (left > 0 && later) {
				parts.push(
					`about ${formatDuration(left)} left in this step, about ${roughDuration(left + later)} until ${plan.length === 2 ? 'both' : `all ${plan.length}`} steps are done (estimates)`,
				);
			} else if (left > 0) {
				parts.push(`about ${formatDuration(left)} left (estimate)`);
			} else {
				parts.push(`longer than the usual ${roughDuration(step.typicalMs)} (a slow network or a busy machine); still working`);
			}
		}
		return `${name(step)}: ${parts.join(', ')}${step.detail ? ` · ${step.detail}` : ''}`;
	}

	function end(summary) {
		if (!current) return;
		clearInterval(timer);
		const step = current;
		current = undefined;
		say(`${name(step)}: done in ${formatDuration(Date.now() - step.started)}${summary ? ` (${summary})` : ''}`);
	}

	return {
		/** Starts step `id` (ends the running one); an id not in the plan runs unnumbered. */
		begin(id, fallback = {}) {
			end();
			const index = plan.findIndex((step) => step.id === id);
			current = {
				...(index >= 0 ? plan[index] : { id, label: fallback.label ?? id, ...fallback }),
				index: index >= 0 ? index : undefined,
				started: Date.now(),
				detail: undefined,
			};
			const notes = [
				current.note,
				current.typicalMs >= 20_000 && `usually about ${roughDuration(current.typicalMs)}`,
			].filter(Boolean);
			const prefix = current.index === undefined ? '' : `step ${current.index + 1} of ${plan.length}: `;
			say(`${prefix}${current.label}${notes.length ? ` (${notes.join('; ')})` : ''}...`);
			timer = setInterval(() => say(progressLine(current)), tickMs);
			timer.unref();
		},
		/** What the running step is at, shown at the end of its next progress line. */
		detail(text) {
			if (current) current.detail = text;
		},
		/** Ends the running step with "done in ...", and `summary` if given. */
		end,
		/** Ends the running step silently (e.g. when it failed: the error says what happened). */
		abort() {
			clearInterval(timer);
			current = undefined;
		},
		get count() {
			return plan.length;
		},
		has(id) {
			return plan.some((step) => step.id === id);
		},
	};
}
