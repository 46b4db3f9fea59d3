import { tryToParseJsonToFormFields } from 'n8n-workflow';
import type { FormFieldsParameter, IDataObject, INodeProperties } from 'n8n-workflow';

import { badSetting, EMAIL_ADDRESS } from '../../helpers/read';

/**
 * Response Type "Custom Form": the email links to a form whose fields the workflow sets, with the
 * parameter names and answer of n8n's own Send and Wait nodes (its Form node's fields), so a
 * workflow moves between them unchanged. The form posts each field as `field-<index>`.
 */

export type FormField = FormFieldsParameter[number];

const CHOICES = ['dropdown', 'radio', 'checkbox'];
// A textarea's worth; a longer value is no answer a person typed.
export const MAX_LENGTH = 10_000;

export const customFormProperties: INodeProperties[] = [
	{
		displayName: 'Define Form',
		name: 'defineForm',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Using Fields Below', value: 'fields' },
			{ name: 'Using JSON', value: 'json' },
		],
		default: 'fields',
	},
	{
		displayName: 'Form Fields',
		name: 'jsonOutput',
		type: 'json',
		typeOptions: { rows: 5 },
		default:
			'[\n  { "fieldLabel": "Delivery date", "fieldType": "date", "requiredField": true },\n  { "fieldLabel": "Note", "fieldType": "textarea" }\n]',
		description:
			'The fields as a list: fieldLabel, fieldType, requiredField, placeholder, fieldOptions (for dropdown, radio and checkbox), multiselect, fieldName and fieldValue (for hiddenField)',
		displayOptions: { show: { defineForm: ['json'] } },
	},
	{
		displayName: 'Form Fields',
		name: 'formFields',
		placeholder: 'Add Form Field',
		type: 'fixedCollection',
		default: {},
		typeOptions: { multipleValues: true, sortable: true },
		displayOptions: { show: { defineForm: ['fields'] } },
		options: [
			{
				displayName: 'Values',
				name: 'values',
				values: [
					{
						displayName: 'Element Type',
						name: 'fieldType',
						type: 'options',
						default: 'text',
						options: [
							{ name: 'Checkboxes', value: 'checkbox' },
							{ name: 'Date', value: 'date' },
							{ name: 'Dropdown', value: 'dropdown' },
							{ name: 'Email', value: 'email' },
							{ name: 'Hidden Field', value: 'hiddenField' },
							{ name: 'Number', value: 'number' },
							{ name: 'Password', value: 'password' },
							{ name: 'Radio Buttons', value: 'radio' },
							{ name: 'Text Input', value: 'text' },
							{ name: 'Textarea', value: 'textarea' },
						],
					},
					{
						displayName: 'Field Label',
						name: 'fieldLabel',
						type: 'string',
						default: '',
						placeholder: 'e.g. Delivery date',
						description: 'Shown above the field; the key of its value in the answer',
						displayOptions: { hide: { fieldType: ['hiddenField'] } },
					},
					{
						displayName: 'Field Name',
						name: 'fieldName',
						type: 'string',
						default: '',
						description: 'The key of the value in the answer',
						displayOptions: { show: { fieldType: ['hiddenField'] } },
					},
					{
						displayName: 'Field Options',
						name: 'fieldOptions',
						placeholder: 'Add Field Option',
						type: 'fixedCollection',
						default: { values: [{ option: '' }] },
						typeOptions: { multipleValues: true, sortable: true },
						displayOptions: { show: { fieldType: CHOICES } },
						options: [
							{
								displayName: 'Values',
								name: 'values',
								values: [{ displayName: 'Option', name: 'option', type: 'string', default: '' }],
							},
						],
					},
					{
						displayName: 'Field Value',
						name: 'fieldValue',
						type: 'string',
						default: '',
						description: 'The value the answer carries: never shown, and not changed by the person',
						displayOptions: { show: { fieldType: ['hiddenField'] } },
					},
					{
						displayName: 'Multiple Choice',
						name: 'multiselect',
						type: 'boolean',
						default: false,
						description: 'Whether to allow more than one option to be chosen',
						displayOptions: { show: { fieldType: ['dropdown'] } },
					},
					{
						displayName: 'Placeholder',
						name: 'placeholder',
						type: 'string',
						default: '',
						displayOptions: {
							show: { fieldType: ['text', 'textarea', 'email', 'number', 'password'] },
						},
					},
					{
						displayName: 'Required Field',
						name: 'requiredField',
						type: 'boolean',
						default: false,
						description: 'Whether to require the person to answer this field',
						displayOptions: { hide: { fieldType: ['hiddenField'] } },
					},
				],
			},
		],
	},
];

const SUPPORTED_TYPES = [
	'text',
	'textarea',
	'email',
	'number',
	'date',
	'password',
	'hiddenField',
	...CHOICES,
];

/**
 * The key of a field's value in the answer, as n8n has it: its label; a hidden field's name (or
 * its fieldLabel in JSON, where n8n 1.x has no fieldName).
 */
export const keyOf = (field: FormField) =>
	String(
		(field.fieldType === 'hiddenField' ? field.fieldName || field.fieldLabel : field.fieldLabel) ??
			'',
	);
export const optionsOf = (field: FormField) =>
	(field.fieldOptions?.values ?? []).map(({ option }) => String(option));
export const isMultiple = (field: FormField) =>
	field.fieldType === 'checkbox' || (field.fieldType === 'dropdown' && field.multiselect === true);

/**
 * The form's fields, checked: read when the email is sent (a field that cannot work fails the
 * run before anything is sent) and again when the form is opened or posted.
 */
export function readFormFields(
	parameter: (name: string, fallback: unknown) => unknown,
): FormField[] {
	let fields: FormField[];
	if (parameter('defineForm', 'fields') === 'json') {
		const json = parameter('jsonOutput', '[]');
		try {
			fields = tryToParseJsonToFormFields(typeof json === 'string' ? json : JSON.stringify(json));
		} catch (error) {
			throw badSetting(
				`Form Fields (JSON) is not valid: ${(error as Error).message}`,
				'Set Form Fields to a list of fields, each with fieldLabel and fieldType.',
			);
		}
	} else {
		fields = parameter('formFields.values', []) as FormField[];
	}
	// A copy: the node's parameters stay as set. A field without type is text, as in n8n's form.
	fields = fields.map((field) => ({ ...field, fieldType: field.fieldType || 'text' }));
	const keys = new Set<string>();
	for (const field of fields) {
		const key = keyOf(field);
		const name = field.fieldType === 'hiddenField' ? 'Field Name' : 'Field Label';
		if (!SUPPORTED_TYPES.includes(field.fieldType!)) {
			throw badSetting(
				`Form field "${key}" has the type "${field.fieldType}", which this node does not offer`,
				`Use one of: ${SUPPORTED_TYPES.join(', ')}.`,
			);
		}
		if (key.trim() === '') {
			throw badSetting(`A form field has no ${name}`, `Give every form field a ${name}.`);
		}
		if (keys.has(key)) {
			throw badSetting(
				`Two form fields are called "${key}"`,
				`Give each form field its own ${name}: it is the key of its value in the answer.`,
			);
		}
		keys.add(key);
		if (CHOICES.includes(field.fieldType!) && optionsOf(field).every((option) => option === '')) {
			throw badSetting(`Form field "${key}" has no options`, 'Add its Field Options.');
		}
	}
	return fields;
}

/** What the form posted for one field, as a list of texts (a checkbox list posts several). */
export function postedValues(body: IDataObject, index: number): unknown[] {
	const value = body[`field-${index}`];
	if (value === undefined || value === null) return [];
	return Array.isArray(value) ? value : [value];
}

/**
 * The answer a person posted, checked as untrusted: each field read from `field-<index>`, others
 * ignored, required fields answered, types and options as the form offers them. Returns the
 * answer keyed by label, or what is wrong with it.
 */
export function readFormAnswer(
	fields: FormField[],
	body: IDataObject,
): { answer: IDataObject } | { problems: string[] } {
	const answer: IDataObject = {};
	const problems: string[] = [];
	fields.forEach((field, index) => {
		const label = keyOf(field);
		if (field.fieldType === 'hiddenField') {
			// The workflow's value, never the post's: a hidden input can be edited.
			answer[label] = String(field.fieldValue ?? '');
			return;
		}
		const values = postedValues(body, index);
		if (values.some((value) => typeof value !== 'string' || value.length > MAX_LENGTH)) {
			problems.push(`${label}: the answer is not valid or too long`);
			return;
		}
		const texts = (values as string[]).filter((text) => text.trim() !== '');
		if (texts.length === 0) {
			if (field.requiredField) problems.push(`${label} is required`);
			answer[label] = emptyAnswer(field);
			return;
		}
		if (isMultiple(field)) {
			const options = optionsOf(field);
			if (new Set(texts).size !== texts.length || texts.some((text) => !options.includes(text))) {
				problems.push(`${label}: choose among the options shown`);
			}
			answer[label] = texts;
			return;
		}
		if (values.length > 1) {
			problems.push(`${label} takes one answer`);
			return;
		}
		const [text] = texts;
		const value = readValue(field, text);
		if (value === undefined) problems.push(`${label}: ${PROBLEMS[field.fieldType!]}`);
		answer[label] = value ?? null;
	});
	return problems.length > 0 ? { problems } : { answer };
}

/** A field left empty: no text for the text types, no choice for the others. */
function emptyAnswer(field: FormField): string | [] | null {
	if (isMultiple(field)) return [];
	return ['text', 'textarea', 'email', 'password'].includes(field.fieldType!) ? '' : null;
}

const PROBLEMS: Record<string, string> = {
	email: 'enter an email address, like name@example.com',
	number: 'enter a number',
	date: 'enter a date',
	dropdown: 'choose one of the options shown',
	radio: 'choose one of the options shown',
};

/** One field's answer, as the workflow gets it; undefined when it is not what the field takes. */
function readValue(field: FormField, text: string): string | number | undefined {
	switch (field.fieldType) {
		case 'text':
			return text.trim();
		case 'email':
			return EMAIL_ADDRESS.test(text.trim()) ? text.trim() : undefined;
		case 'number':
			return Number.isFinite(Number(text)) ? Number(text) : undefined;
		case 'date': {
			// What a date input posts: yyyy-mm-dd, a real day (not 2026-02-30, nor 2026-13-01).
			const day = new Date(`${text}T00:00:00Z`);
			const valid =
				/^\d{4}-\d\d-\d\d$/.test(text) &&
				!Number.isNaN(day.getTime()) &&
				day.toISOString().startsWith(text);
			return valid ? text : undefined;
		}
		case 'dropdown':
		case 'radio':
			return optionsOf(field).includes(text) ? text : undefined;
		default:
			return text;
	}
}
