import type {
	IDataObject,
	IWebhookDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { escapeHtml } from '../../helpers/html';
import { isObject } from '../../helpers/read';
import type { FormField } from './customForm';
import {
	isMultiple,
	keyOf,
	MAX_LENGTH,
	optionsOf,
	postedValues,
	readFormAnswer,
	readFormFields,
} from './customForm';

/*
 * What the links of a Send and Wait email open: n8n calls the node's `webhook`, never `execute`,
 * to show a page or take the answer that resumes the execution.
 */

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

const BUTTON =
	'display:inline-block;margin:4px 8px 4px 0;padding:10px 20px;border-radius:4px;text-decoration:none;font-weight:bold;';
export const PRIMARY = `${BUTTON}background:#1f6feb;color:#ffffff;`;
export const SECONDARY = `${BUTTON}background:#ffffff;color:#1f6feb;border:1px solid #1f6feb;`;

/** The label of the button that gives this answer, in the email and on its confirmation page. */
export function buttonLabel(approval: IDataObject, approved: boolean): string {
	const label = approved ? approval.approveLabel : approval.disapproveLabel;
	if (typeof label === 'string' && label.trim() !== '') return label;
	return approved ? 'Approve' : 'Decline';
}

/** A text option as set, or undefined when it is empty. */
export function textOption(value: unknown): string | undefined {
	return typeof value === 'string' && value.trim() !== '' ? value : undefined;
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

/** The fields as HTML inputs named `field-<index>`, holding what was posted (after a refusal). */
export function formFieldsHtml(fields: FormField[], body: IDataObject = {}): string {
	return fields
		.map((field, index) => {
			if (field.fieldType === 'hiddenField') return '';
			const name = `field-${index}`;
			const label = escapeHtml(keyOf(field));
			const posted = postedValues(body, index).filter((value) => typeof value === 'string');
			const required = field.requiredField ? ' required' : '';
			const placeholder = field.placeholder
				? ` placeholder="${escapeHtml(String(field.placeholder))}"`
				: '';
			const mark = field.requiredField ? ' *' : '';
			if (field.fieldType === 'radio' || field.fieldType === 'checkbox') {
				const choices = optionsOf(field).map(
					(option) =>
						`<label style="display:block"><input type="${field.fieldType}" name="${name}" value="${escapeHtml(option)}"${posted.includes(option) ? ' checked' : ''}${field.fieldType === 'radio' ? required : ''}> ${escapeHtml(option)}</label>`,
				);
				return `<fieldset style="${BOX}"><legend>${label}${mark}</legend>${choices.join('')}</fieldset>`;
			}
			let input: string;
			if (field.fieldType === 'dropdown') {
				const multiple = isMultiple(field) ? ' multiple' : '';
				const choices = optionsOf(field).map(
					(option) =>
						`<option value="${escapeHtml(option)}"${posted.includes(option) ? ' selected' : ''}>${escapeHtml(option)}</option>`,
				);
				const none = isMultiple(field) ? '' : '<option value=""></option>';
				input = `<select id="${name}" name="${name}"${multiple}${required} style="${WIDE}">${none}${choices.join('')}</select>`;
			} else if (field.fieldType === 'textarea') {
				input = `<textarea id="${name}" name="${name}" rows="5" maxlength="${MAX_LENGTH}"${placeholder}${required} style="${WIDE}">${escapeHtml(String(posted[0] ?? ''))}</textarea>`;
			} else {
				// A password is never sent back to the browser.
				const kept = field.fieldType === 'password' ? undefined : posted[0];
				const value = kept === undefined ? '' : ` value="${escapeHtml(String(kept))}"`;
				const step = field.fieldType === 'number' ? ' step="any"' : '';
				input = `<input id="${name}" name="${name}" type="${field.fieldType}"${step} maxlength="${MAX_LENGTH}"${value}${placeholder}${required} style="${WIDE}">`;
			}
			return `<p><label for="${name}"><strong>${label}</strong>${mark}</label><br>${input}</p>`;
		})
		.join('');
}

const WIDE = 'width:100%;box-sizing:border-box;padding:6px;font-size:1em';
const BOX = 'border:1px solid #d0d7de;border-radius:4px;margin:1em 0';
