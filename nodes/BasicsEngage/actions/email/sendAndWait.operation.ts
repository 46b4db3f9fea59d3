import { SEND_AND_WAIT_OPERATION, updateDisplayOptions, WAIT_INDEFINITELY } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	IWebhookDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { escapeHtml } from '../../helpers/html';
import { optionsCollection, retryOptions } from '../../helpers/options';
import { badSetting, isObject, readNumberOption, readText } from '../../helpers/read';
import type { DeclareRequests } from '../../transport';
import { invalidInput } from '../../helpers/failure';
import { customFormProperties, formFieldsHtml, readFormAnswer, readFormFields } from './customForm';
import { addressProperties, queuedEmail, readAddress, toSentEmail } from './send.operation';

/**
 * The links of the email resume the execution here: n8n's waiting webhooks, at
 * /webhook-waiting/<execution id>/<node id>. GET opens a link (its page answers nothing); POST
 * is that page's button or its form (free text, custom form): the answer.
 */
export const webhooks: IWebhookDescription[] = ['GET', 'POST'].map((httpMethod) => ({
	name: 'default',
	httpMethod,
	responseMode: 'onReceived',
	responseData: '',
	path: '={{ $nodeId }}',
	restartWebhook: true,
	isFullPath: true,
}));

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

const BUTTON =
	'display:inline-block;margin:4px 8px 4px 0;padding:10px 20px;border-radius:4px;text-decoration:none;font-weight:bold;';
const PRIMARY = `${BUTTON}background:#1f6feb;color:#ffffff;`;
const SECONDARY = `${BUTTON}background:#ffffff;color:#1f6feb;border:1px solid #1f6feb;`;

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

/** The label of the button that gives this answer, in the email and on its confirmation page. */
function buttonLabel(approval: IDataObject, approved: boolean): string {
	const label = approved ? approval.approveLabel : approval.disapproveLabel;
	if (typeof label === 'string' && label.trim() !== '') return label;
	return approved ? 'Approve' : 'Decline';
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

function page(title: string, body = ''): string {
	return (
		`<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
		`<body style="font-family:Arial,sans-serif;max-width:36em;margin:3em auto;padding:0 1em"><h1 style="font-size:1.3em">${escapeHtml(title)}</h1>${body}</body></html>`
	);
}

/** A form without action: the browser posts it to the page's own URL, signature and all. */
function postForm(fields: string, label: string, attributes = ''): string {
	return `<form method="post"${attributes}>${fields}<p><button type="submit" style="${PRIMARY}border:0;font-size:1em;cursor:pointer">${escapeHtml(label)}</button></p></form>`;
}

function recorded(data: IDataObject): IWebhookResponseData {
	return {
		webhookResponse: page('Your response has been recorded', '<p>You can close this page.</p>'),
		workflowData: [[{ json: { data: { ...data, respondedAt: new Date().toISOString() } } }]],
	};
}

/**
 * A link of the email was opened (GET), or its page's button pressed (POST). Mail gateways and
 * link scanners open every link of an email, often posing as a browser, but press nothing: so
 * opening a link only shows the page, and only its POST answers (`workflowData` resumes the
 * execution). No User-Agent is looked at: a word list refuses real phones and lets disguised
 * scanners through. n8n answers HEAD itself (this node has no HEAD webhook): nothing is recorded.
 */
export async function webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const { method, query } = this.getRequestObject();
	const subject = String(this.getNodeParameter('subject', 'Your response'));
	if (this.getNodeParameter('responseType', 'approval') === 'approval') {
		const approval = this.getNodeParameter('approvalOptions.values', {}) as IDataObject;
		// Only the answers the email's buttons give: any other link was not made by this node.
		const offered = approval.approvalType === 'double' ? ['true', 'false'] : ['true'];
		if (!offered.includes(query.approved as string)) {
			const again = '<p>This link holds no answer: use a button in the email.</p>';
			return { webhookResponse: page(subject, again) };
		}
		const approved = query.approved === 'true';
		if (method === 'POST') return recorded({ approved });
		const label = buttonLabel(approval, approved);
		const confirmation = `<p>Press the button to answer <strong>${escapeHtml(label)}</strong>.</p>${postForm('', label)}`;
		return { webhookResponse: page(subject, confirmation) };
	}
	const options = this.getNodeParameter('options', {}) as IDataObject;
	// A post may hold anything, or nothing: JSON null, a text, a list.
	const received = method === 'POST' ? this.getBodyData() : undefined;
	const body = isObject(received) ? received : {};
	let fields: string;
	let attributes = '';
	let problems: string[] = [];
	if (this.getNodeParameter('responseType', 'approval') === 'customForm') {
		const formFields = readFormFields((name, fallback) => this.getNodeParameter(name, fallback));
		// n8n 2.x takes a custom form's post only as multipart/form-data; it hands over its fields
		// as `data` (and any files, which are ignored, as `files`).
		attributes = ' enctype="multipart/form-data"';
		const posted = isObject(body.data) ? body.data : {};
		if (method === 'POST') {
			const read = readFormAnswer(formFields, posted);
			if ('answer' in read) return recorded(read.answer);
			problems = read.problems;
		}
		fields = formFieldsHtml(formFields, posted);
	} else {
		if (typeof body.text === 'string' && body.text.trim() !== '')
			return recorded({ text: body.text });
		fields =
			'<textarea name="text" rows="6" required style="width:100%;box-sizing:border-box"></textarea>';
	}
	// A refused post: the form again, with what is wrong; nothing is recorded.
	const refusal =
		problems.length === 0
			? ''
			: `<div role="alert" style="color:#b42318"><p>Nothing was recorded yet:</p><ul>${problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join('')}</ul></div>`;
	const description =
		textOption(options.responseFormDescription) ?? String(this.getNodeParameter('message', ''));
	const form =
		`<p style="white-space:pre-wrap">${escapeHtml(description)}</p>${refusal}` +
		postForm(fields, textOption(options.responseFormButtonLabel) ?? 'Submit', attributes);
	return { webhookResponse: page(textOption(options.responseFormTitle) ?? subject, form) };
}

/** A text option as set, or undefined when it is empty. */
function textOption(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Reads a parameter for the first item, as the email is made of the first item's values. */
function executeParameter(context: IExecuteFunctions) {
	return (name: string, fallback: unknown) => context.getNodeParameter(name, 0, fallback);
}
