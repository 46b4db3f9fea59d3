import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { concurrencyOption, optionsCollection, retryOptions } from '../../helpers/options';
import {
	readEmailAddress,
	readNumberOption,
	readOptionalText,
	readText,
	readTrimmed,
} from '../../helpers/read';
import type { DeclareRequests, SuccessContract } from '../../transport';
import { invalidInput } from '../../helpers/failure';
import { skipAlreadySent, skipAlreadySentOption } from './skipAlreadySent';

const emailConcurrency = concurrencyOption('How many emails to send at the same time');

/** The documented success of /email/send: a queued message with its ID. */
export const queuedEmail: SuccessContract = {
	check: (data) =>
		typeof data.messageId === 'string' && data.messageId.trim() !== ''
			? undefined
			: 'it has no "messageId"',
	effect: 'the email may have been queued',
	dailyQuota: true,
};

/** To, From and Subject: what every email of the node starts with (Send and Wait too). */
export const addressProperties: INodeProperties[] = [
	{
		displayName: 'To',
		name: 'to',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. jane.doe@example.com',
		description: 'Email address of the recipient',
	},
	{
		displayName: 'From',
		name: 'from',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. hello@yourcompany.com',
		description: 'Sender email address',
		hint: 'Must be a sender you verified in BasicsEngage',
	},
	{
		displayName: 'Subject',
		name: 'subject',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Welcome to Acme',
	},
];

const properties: INodeProperties[] = [
	{
		displayName:
			'One email per input item, to one recipient each. Every email counts toward the daily quota of your BasicsEngage plan.',
		name: 'sendEmailNotice',
		type: 'notice',
		default: '',
	},
	...addressProperties,
	{
		displayName: 'Content',
		name: 'content',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'HTML', value: 'html', description: 'Write the body as HTML' },
			{ name: 'Plain Text', value: 'text', description: 'Write the body as plain text' },
			{
				name: 'Template',
				value: 'template',
				description: 'Use a template saved in BasicsEngage',
			},
		],
		default: 'html',
		description: 'What the email body is made of. BasicsEngage takes exactly one of them.',
	},
	{
		displayName: 'HTML',
		name: 'html',
		type: 'string',
		typeOptions: { rows: 6 },
		required: true,
		default: '',
		placeholder: 'e.g. <p>Hi Jane, welcome aboard!</p>',
		description: 'HTML body of the email',
		displayOptions: { show: { content: ['html'] } },
	},
	{
		displayName: 'Text',
		name: 'text',
		type: 'string',
		typeOptions: { rows: 6 },
		required: true,
		default: '',
		placeholder: 'e.g. Hi Jane, welcome aboard!',
		description: 'Plain text body of the email',
		displayOptions: { show: { content: ['text'] } },
	},
	{
		displayName: 'Template ID',
		name: 'templateId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. tmpl_welcome',
		description: 'ID of a template saved in BasicsEngage',
		hint: 'Find it in the Content section of the BasicsEngage dashboard',
		displayOptions: { show: { content: ['template'] } },
	},
	{
		displayName: 'Template Variables',
		name: 'templateVariablesMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Using Fields Below', value: 'keyValue' },
			{ name: 'Using JSON', value: 'json' },
		],
		default: 'keyValue',
		description: 'How to give values for the template variables',
		displayOptions: { show: { content: ['template'] } },
	},
	{
		displayName: 'Variables',
		name: 'templateVariables',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Variable',
		default: {},
		description: 'Values for variables of the template. Every name must exist in the template.',
		displayOptions: {
			show: { content: ['template'], templateVariablesMode: ['keyValue'] },
		},
		options: [
			{
				displayName: 'Variable',
				name: 'variable',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						placeholder: 'e.g. firstName',
					},
					{
						displayName: 'Value',
						name: 'value',
						type: 'string',
						default: '',
						placeholder: 'e.g. Jane',
					},
				],
			},
		],
	},
	{
		displayName: 'Variables (JSON)',
		name: 'templateVariablesJson',
		type: 'json',
		default: '{}',
		placeholder: '{ "firstName": "Jane", "company": "Acme" }',
		description:
			'A JSON object of variable names and values. Every name must exist in the template.',
		displayOptions: {
			show: { content: ['template'], templateVariablesMode: ['json'] },
		},
	},
	optionsCollection([
		emailConcurrency,
		...retryOptions(),
		skipAlreadySentOption,
		{
			displayName: 'Retry Send On Server Error',
			name: 'retrySendOnServerError',
			type: 'boolean',
			default: false,
			description:
				"Whether to also retry after a server error (5xx), a dropped connection or a timeout, and to send an email that 'Skip Emails Already Sent' knows only as 'outcome unknown'. Without it, an email is retried only when it provably never reached BasicsEngage.",
			hint: 'The first attempt may already have queued the email, so a recipient can get it twice',
		},
	]),
];

const displayOptions = { show: { resource: ['email'], operation: ['send'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/** One email per input item, several in flight at once. */
export const requests: DeclareRequests = function (options, { timeout }) {
	// A retried email may be queued twice, so only the user can allow that.
	const repeatable = options.retrySendOnServerError === true;
	const skip = skipAlreadySent(this, options, repeatable, timeout);
	return {
		path: '/email/send',
		body: (itemIndex) => {
			const email = readEmailRequest(this, itemIndex);
			// Read with the item, so a Key expression that fails fails this item only.
			skip?.readKey(itemIndex, email);
			return email;
		},
		contract: queuedEmail,
		toJson: toSentEmail,
		repeatable,
		done: 'Queued',
		shape: { per: 'item', concurrency: readNumberOption(options, emailConcurrency) },
		guard: skip,
	};
};

export function toSentEmail(answer: IDataObject): IDataObject {
	const data = (answer.data ?? {}) as IDataObject;
	const dailyEmailCount = Number(data.dailyEmailCount);
	const dailyEmailLimit = Number(data.dailyEmailLimit);
	return {
		status: answer.status,
		message: answer.message,
		messageId: data.messageId,
		dailyEmailCount: data.dailyEmailCount,
		dailyEmailLimit: data.dailyEmailLimit,
		dailyEmailsRemaining:
			Number.isFinite(dailyEmailCount) && Number.isFinite(dailyEmailLimit)
				? Math.max(0, dailyEmailLimit - dailyEmailCount)
				: null,
	};
}

function readEmailRequest(context: IExecuteFunctions, itemIndex: number): IDataObject {
	return { ...readAddress(context, itemIndex), ...readContent(context, itemIndex) };
}

/** The item's To, From and Subject, checked (addressProperties). */
export function readAddress(context: IExecuteFunctions, itemIndex: number): IDataObject {
	return {
		to: readEmailAddress(context.getNodeParameter('to', itemIndex), 'To'),
		from: readEmailAddress(context.getNodeParameter('from', itemIndex), 'From'),
		subject: readText(context.getNodeParameter('subject', itemIndex), 'Subject'),
	};
}

/** Exactly one of html, text and templateId, as the API's rule asks. */
function readContent(context: IExecuteFunctions, itemIndex: number): IDataObject {
	const content = context.getNodeParameter('content', itemIndex) as 'html' | 'text' | 'template';
	if (content === 'html' || content === 'text') {
		const label = content === 'html' ? 'HTML' : 'Text';
		return { [content]: readText(context.getNodeParameter(content, itemIndex), label) };
	}
	const templateId = readTrimmed(context.getNodeParameter('templateId', itemIndex), 'Template ID');
	const variables = readTemplateVariables(context, itemIndex);
	return { templateId, ...(variables ? { templateVariables: variables } : {}) };
}

function readTemplateVariables(
	context: IExecuteFunctions,
	itemIndex: number,
): IDataObject | undefined {
	const mode = context.getNodeParameter('templateVariablesMode', itemIndex) as 'keyValue' | 'json';
	if (mode === 'json') {
		return parseVariablesJson(context.getNodeParameter('templateVariablesJson', itemIndex));
	}
	const { variable: pairs = [] } = context.getNodeParameter('templateVariables', itemIndex, {}) as {
		variable?: Array<{ name?: unknown; value?: unknown }>;
	};
	refuseUnsendableNames(
		pairs.map((pair) => (typeof pair.name === 'string' ? pair.name.trim() : '')),
	);
	const variables: IDataObject = {};
	for (const pair of pairs) {
		const name = typeof pair.name === 'string' ? pair.name.trim() : '';
		if (name === '') {
			throw invalidInput(
				'A template variable has no name',
				'Give every variable a name or remove it.',
			);
		}
		if (Object.hasOwn(variables, name)) {
			throw invalidInput(
				`Template variable "${name}" is set twice`,
				'Keep one entry per variable name.',
			);
		}
		// Values go out unchanged (no splitting on "," or "="); only non-text types are refused.
		variables[name] = readOptionalText(pair.value, `Template variable "${name}"`) ?? '';
	}
	return pairs.length > 0 ? variables : undefined;
}

function parseVariablesJson(raw: unknown): IDataObject | undefined {
	let parsed: unknown = raw;
	if (typeof raw === 'string') {
		if (raw.trim() === '') return undefined;
		try {
			parsed = JSON.parse(raw);
		} catch (error) {
			throw invalidInput(
				'Variables (JSON) is not valid JSON',
				`Write a JSON object such as { "firstName": "Jane" }. Parser said: ${(error as Error).message}`,
			);
		}
	}
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
		throw invalidInput(
			'Variables (JSON) must be a JSON object',
			'Write an object of names and values, such as { "firstName": "Jane" }.',
		);
	}
	refuseUnsendableNames(Object.keys(parsed));
	return Object.keys(parsed).length > 0 ? (parsed as IDataObject) : undefined;
}

// axios, n8n's HTTP client, drops object keys with these names when it copies a request (a guard
// against prototype pollution): the email would go out without them, as if they were never set.
const UNSENDABLE_NAMES = new Set(['constructor', 'prototype', '__proto__']);

function refuseUnsendableNames(names: string[]): void {
	const unsendable = [...new Set(names.filter((name) => UNSENDABLE_NAMES.has(name)))];
	if (unsendable.length === 0) return;
	const listed = unsendable.map((name) => `"${name}"`).join(', ');
	throw invalidInput(
		`Template variable${unsendable.length > 1 ? 's' : ''} ${listed} cannot be sent`,
		`n8n drops variables named constructor, prototype or __proto__ from every request, so the template would never get their values. Rename ${listed} in the template and here. Nothing was sent for this item.`,
	);
}
