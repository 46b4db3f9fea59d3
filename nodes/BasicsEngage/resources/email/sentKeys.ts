import type {
	DeduplicationScope,
	ICheckProcessedOptions,
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';

import { invalidInput } from '../../shared/errors';
import type { RunMemory } from '../../shared/once';
import type { SkipHook } from '../../shared/perItem';
import { readNumberOption } from '../../shared/settings';

const historySizeValue: INodeProperties = {
	displayName: 'History Size',
	name: 'historySize',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 1_000_000, numberPrecision: 0 },
	default: 10000,
	description: 'How many keys to remember; the oldest are forgotten first',
};

/**
 * "Skip Emails Already Sent": a key per email, remembered in n8n's own deduplication store (the
 * one the Remove Duplicates node uses). It lives in n8n's database, so it holds across
 * executions and across the workers of queue mode.
 */
export const skipAlreadySentOption: INodeProperties = {
	displayName: 'Skip Emails Already Sent',
	name: 'skipAlreadySent',
	type: 'fixedCollection',
	placeholder: 'Add Skip Emails Already Sent',
	default: { settings: {} },
	description:
		'Whether to remember each email sent and skip an email whose key was sent before, by any execution of this node or workflow. A skipped email costs no quota.',
	options: [
		{
			displayName: 'Settings',
			name: 'settings',
			values: [
				{
					displayName: 'Key',
					name: 'key',
					type: 'string',
					default: '',
					placeholder: 'e.g. {{ $json.orderId }}',
					description:
						'What makes two emails the same. Leave empty for the recipient plus the template ID (or the subject).',
				},
				{
					displayName: 'Remember Per',
					name: 'scope',
					type: 'options',
					options: [
						{ name: 'This Node', value: 'node' },
						{ name: 'This Workflow', value: 'workflow' },
					],
					default: 'node',
				},
				historySizeValue,
			],
		},
	],
};

export interface SentKeys {
	scope: DeduplicationScope;
	options: ICheckProcessedOptions;
	/** The item's key: the Key expression's value, else recipient and template or subject. */
	keyOf: (itemIndex: number, body: IDataObject) => string;
}

/** The option's settings for this run, or undefined when it is off. */
export function readSentKeys(
	context: IExecuteFunctions,
	options: IDataObject,
): SentKeys | undefined {
	const settings = (options.skipAlreadySent as { settings?: IDataObject } | undefined)?.settings;
	if (!settings) return undefined;
	const scope: DeduplicationScope = settings.scope === 'workflow' ? 'workflow' : 'node';
	const maxEntries = readNumberOption(settings, historySizeValue);
	return {
		scope,
		options: { mode: 'entries', maxEntries },
		keyOf: (itemIndex, body) => {
			const custom = context.getNodeParameter(
				'options.skipAlreadySent.settings.key',
				itemIndex,
				'',
			);
			if (typeof custom === 'string' || typeof custom === 'number') {
				if (String(custom).trim() !== '') return `key:${String(custom).trim()}`;
			}
			const to = String(body.to).toLowerCase();
			return body.templateId
				? `${to}|template:${body.templateId}`
				: `${to}|subject:${body.subject}`;
		},
	};
}

/**
 * The option's hook into the run: before sending, each item's key is claimed in the store (an
 * item an earlier try of this run already handled is answered from the run's memory instead,
 * so it is neither claimed nor skipped again); after sending, the keys of emails that provably
 * were not queued are released.
 */
export function skipAlreadySent(
	context: IExecuteFunctions,
	sentKeys: SentKeys,
	keys: Map<number, string>,
	memory: RunMemory,
): SkipHook {
	const claimedBy = new Map<number, string>();
	return {
		async select(pending) {
			const fresh = pending.filter(
				({ itemIndex, request }) => !memory.recall(String(itemIndex), request.body),
			);
			const earlier = await claimKeys(context, sentKeys, [
				...new Set(fresh.map(({ itemIndex }) => keys.get(itemIndex) as string)),
			]);
			const firstWithKey = new Map<string, number>();
			const skipped = new Map<number, IDataObject>();
			for (const { itemIndex } of fresh) {
				const key = keys.get(itemIndex) as string;
				const first = firstWithKey.get(key);
				if (!earlier.has(key) && first === undefined) {
					firstWithKey.set(key, itemIndex);
					claimedBy.set(itemIndex, key);
					continue;
				}
				skipped.set(itemIndex, {
					skipped: true,
					reason:
						first === undefined
							? 'Not sent: an email with the same key was sent before (Skip Emails Already Sent)'
							: `Not sent: item ${first} of this run has the same key (Skip Emails Already Sent)`,
				});
			}
			return skipped;
		},
		async settle(sent, results) {
			// Released when nothing was queued: never sent (the run stopped), never arrived, or
			// refused (400, 401, 429). Kept when queued or perhaps queued: a resend could deliver twice.
			const unsent = sent
				.filter(({ itemIndex }, index) => {
					const result = results[index];
					const notQueued =
						result === undefined || (!result.ok && !result.failure.mayHaveTakenEffect);
					return claimedBy.has(itemIndex) && notQueued;
				})
				.map(({ itemIndex }) => claimedBy.get(itemIndex) as string);
			if (unsent.length === 0) return;
			// A failed release only means such an email is skipped later; the run's answer stands.
			await context.helpers
				.removeProcessed(unsent, sentKeys.scope, sentKeys.options)
				.catch(() => undefined);
		},
	};
}

/** Records the keys, before anything is sent; returns those recorded by earlier executions. */
async function claimKeys(
	context: IExecuteFunctions,
	sentKeys: SentKeys,
	keys: string[],
): Promise<Set<string>> {
	if (keys.length === 0) return new Set();
	let answer;
	try {
		answer = await context.helpers.checkProcessedAndRecord(keys, sentKeys.scope, sentKeys.options);
	} catch (error) {
		answer = error as Error;
	}
	if (answer instanceof Error) {
		throw invalidInput(
			'Skip Emails Already Sent could not read n8n’s deduplication store',
			`Nothing was sent. n8n said: ${answer.message}.`,
		);
	}
	return new Set(answer.processed.map(String));
}
