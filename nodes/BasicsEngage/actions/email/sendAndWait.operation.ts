import { SEND_AND_WAIT_OPERATION, updateDisplayOptions, WAIT_INDEFINITELY } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { invalidInput } from '../../helpers/failure';
import { escapeHtml } from '../../helpers/html';
import { optionsCollection, retryOptions } from '../../helpers/options';
import { badSetting, isObject, readNumberOption, readText } from '../../helpers/read';
import type { DeclareRequests } from '../../transport';
import { customFormProperties, readFormFields } from './customForm';
import { buttonLabel, PRIMARY, SECONDARY, textOption } from './responsePage';
import { addressProperties, queuedEmail, readAddress, toSentEmail } from './send.operation';

const resumeAmount: INodeProperties = {
	displayName: 'Amount',
	name: 'resumeAmount',
	type: 'number',
	typeOptions: { minValue: 0, numberPrecision: 2 },
	default: 45,
	description: 'How long to wait for the answer',
	displayOptions: { show: { limitType: ['afterTimeInterval'] } },
};

const MS_PER_UNIT = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** n8n's own Limit Wait Time option (names and values as its Send and Wait nodes have them). */
const limitWaitTimeOption: INodeProperties = {
	displayName: 'Limit Wait Time',
	name: 'limitWaitTime',
	type: 'fixedCollection',
	description:
		'Whether to stop waiting after a while. The workflow then goes on with the input items, without "data".',
	default: { values: { limitType: 'afterTimeInterval', resumeAmount: 45, resumeUnit: 'minutes' } },
	options: [
		{
			displayName: 'Values',
			name: 'values',
			values: [
				{
					displayName: 'Limit Type',
					name: 'limitType',
					type: 'options',
					options: [
						{
							name: 'After Time Interval',
							value: 'afterTimeInterval',
							description: 'Waits for a certain amount of time',
						},
						{
							name: 'At Specified Time',
							value: 'atSpecifiedTime',
							description: 'Waits until a date and time',
						},
					],
					default: 'afterTimeInterval',
				},
				resumeAmount,
				{
					displayName: 'Unit',
					name: 'resumeUnit',
					type: 'options',
					options: [
						{ name: 'Minutes', value: 'minutes' },
						{ name: 'Hours', value: 'hours' },
						{ name: 'Days', value: 'days' },
					],
					default: 'minutes',
					displayOptions: { show: { limitType: ['afterTimeInterval'] } },
				},
				{
					displayName: 'Max Date and Time',
					name: 'maxDateAndTime',
					type: 'dateTime',
					default: '',
					description: 'When to stop waiting',
					displayOptions: { show: { limitType: ['atSpecifiedTime'] } },
				},
			],
		},
	],
};

/** The link and the page of Free Text and Custom Form, named as in n8n's own Send and Wait nodes. */
const formOptions: INodeProperties[] = [
	{
		displayName: 'Message Button Label',
		name: 'messageButtonLabel',
		type: 'string',
		default: 'Respond',
		description: 'The label of the link in the email',
	},
	{
		displayName: 'Response Form Title',
		name: 'responseFormTitle',
		type: 'string',
		default: '',
		description: 'The title of the form page; the subject when empty',
	},
	{
		displayName: 'Response Form Description',
		name: 'responseFormDescription',
		type: 'string',
		default: '',
		description: 'Text shown above the fields; the message when empty',
	},
	{
		displayName: 'Response Form Button Label',
		name: 'responseFormButtonLabel',
		type: 'string',
		default: 'Submit',
	},
].map((option) => ({
	...option,
	displayOptions: { show: { '/responseType': ['freeText', 'customForm'] } },
})) as INodeProperties[];

const properties: INodeProperties[] = [
	{
		displayName:
			"Sends one email (with the first input item's values) and pauses the workflow until the recipient answers through its links. The links point to this n8n (its WEBHOOK_URL): the recipient must be able to open them.",
		name: 'sendAndWaitNotice',
		type: 'notice',
		default: '',
	},
	...addressProperties,
	{
		displayName: 'Message',
		name: 'message',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		placeholder: 'e.g. Refund 120 EUR to order 1042?',
		description: 'Plain text shown above the buttons (or the link to the form)',
	},
	{
		displayName: 'Response Type',
		name: 'responseType',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Approval',
				value: 'approval',
				description: 'Buttons in the email: Approve, or Approve and Decline',
			},
			{
				name: 'Custom Form',
				value: 'customForm',
				description: 'A link to a form with the fields you set',
			},
			{
				name: 'Free Text',
				value: 'freeText',
				description: 'A link to a page with a text box',
			},
		],
		default: 'approval',
	},
	{
		displayName: 'Approval Options',
		name: 'approvalOptions',
		type: 'fixedCollection',
		placeholder: 'Add option',
		default: {},
		displayOptions: { show: { responseType: ['approval'] } },
		options: [
			{
				displayName: 'Values',
				name: 'values',
				values: [
					{
						displayName: 'Type of Approval',
						name: 'approvalType',
						type: 'options',
						options: [
							{ name: 'Approve Only', value: 'single' },
							{ name: 'Approve and Decline', value: 'double' },
						],
						default: 'single',
					},
					{
						displayName: 'Approve Button Label',
						name: 'approveLabel',
						type: 'string',
						default: 'Approve',
					},
					{
						displayName: 'Decline Button Label',
						name: 'disapproveLabel',
						type: 'string',
						default: 'Decline',
						displayOptions: { show: { approvalType: ['double'] } },
					},
				],
			},
		],
	},
	...updateDisplayOptions({ show: { responseType: ['customForm'] } }, customFormProperties),
	optionsCollection([limitWaitTimeOption, ...formOptions, ...retryOptions()]),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['email'], operation: [SEND_AND_WAIT_OPERATION] } },
	properties,
);

/**
 * One email for the whole input, then the wait. The email is sent as Send Email sends one (never
 * again once it may have reached BasicsEngage); on an answer n8n calls `webhook`, not this.
 */
export const requests: DeclareRequests = function (options) {
	// n8n 2.x serves this operation to AI agents as the review tool ("HitlTool"), never as a tool.
	if (this.getNode().type.endsWith('.basicsEngageTool')) {
		throw invalidInput(
			'Send and Wait for Response cannot run as an AI tool',
			'In n8n 2.x, connect "BasicsEngage: Send and Wait for Response" as the human review of the tools that need approval.',
		);
	}
	return {
		path: '/email/send',
		// The first item's email, for every item: the execution waits once.
		body: () => ({ ...readAddress(this, 0), html: emailHtml(this) }),
		shape: { per: 'run', waitTill: readWaitTill(options) },
		contract: queuedEmail,
		toJson: toSentEmail,
		repeatable: false,
		done: 'Queued',
	};
};

/** When n8n stops waiting and goes on with the input items. */
function readWaitTill(options: IDataObject): Date {
	const limit = (options.limitWaitTime as IDataObject | undefined)?.values;
	if (!isObject(limit)) return WAIT_INDEFINITELY;
	if (limit.limitType === 'atSpecifiedTime') {
		const until = new Date(String(limit.maxDateAndTime ?? ''));
		if (Number.isNaN(until.getTime())) {
			throw badSetting(
				'Max Date and Time is not a date',
				'Set Options > Limit Wait Time > Max Date and Time to a date and time.',
			);
		}
		return until;
	}
	const amount = readNumberOption(limit, resumeAmount);
	const unit = MS_PER_UNIT[limit.resumeUnit as keyof typeof MS_PER_UNIT] ?? MS_PER_UNIT.minutes;
	return new Date(Date.now() + amount * unit);
}

/**
 * A link that resumes this waiting execution at this node, with `query` in it. n8n 2.x and the
 * late 1.x (1.122, 1.123) sign it with a token n8n checks before calling the node's webhook;
 * 1.x checks only when the node asks. An older n8n lacks signing: there the link is n8n's plain
 * resume URL (`$execution.resumeUrl`), which works for anyone who has it.
 */
function resumeUrl(context: IExecuteFunctions, query: Record<string, string>): string {
	const signing = context as Partial<Pick<IExecuteFunctions, 'getSignedResumeUrl'>> & {
		setSignatureValidationRequired?: () => void;
	};
	if (typeof signing.getSignedResumeUrl === 'function') {
		signing.setSignatureValidationRequired?.();
		return signing.getSignedResumeUrl(query);
	}
	const url = new URL(context.evaluateExpression('{{ $execution.resumeUrl }}', 0) as string);
	url.pathname += `/${encodeURIComponent(context.getNode().id)}`;
	for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
	return url.toString();
}

/** The message as text, then a button per answer, each a signed link that resumes the execution. */
function emailHtml(context: IExecuteFunctions): string {
	const message = readText(context.getNodeParameter('message', 0), 'Message');
	const button = (label: string, style: string, query: Record<string, string>) =>
		`<a href="${escapeHtml(resumeUrl(context, query))}" target="_blank" style="${style}">${escapeHtml(label)}</a>`;
	const buttons: string[] = [];
	const responseType = context.getNodeParameter('responseType', 0);
	if (responseType === 'freeText' || responseType === 'customForm') {
		// A form that cannot work fails the run here, before the email goes out.
		if (responseType === 'customForm') readFormFields(executeParameter(context));
		const label = textOption(context.getNodeParameter('options.messageButtonLabel', 0, ''));
		buttons.push(button(label ?? 'Respond', PRIMARY, {}));
	} else {
		const approval = context.getNodeParameter('approvalOptions.values', 0, {}) as IDataObject;
		if (approval.approvalType === 'double') {
			buttons.push(button(buttonLabel(approval, false), SECONDARY, { approved: 'false' }));
		}
		buttons.push(button(buttonLabel(approval, true), PRIMARY, { approved: 'true' }));
	}
	return (
		'<!DOCTYPE html><html><body style="font-family:Arial,sans-serif;font-size:15px;color:#1f2328">' +
		`<p style="white-space:pre-wrap">${escapeHtml(message)}</p><p>${buttons.join('')}</p></body></html>`
	);
}

/** Reads a parameter for the first item, as the email is made of the first item's values. */
function executeParameter(context: IExecuteFunctions) {
	return (name: string, fallback: unknown) => context.getNodeParameter(name, 0, fallback);
}
