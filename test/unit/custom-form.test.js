// @ts-check
'use strict';

/**
 * Send and Wait's custom form, read without the engine: the fields the workflow defines
 * (readFormFields) and the answer a person posts (readFormAnswer), untrusted. The form page,
 * the signed link and the resume are the engine's part: test/node/send-and-wait.test.js.
 */

const { readFormAnswer, readFormFields } = require('./built');

const choices = (/** @type {string[]} */ ...names) => ({
	values: names.map((option) => ({ option })),
});
/** @typedef {Parameters<typeof readFormAnswer>[0][number]} FormField @type {Record<string, FormField>} */
const FIELDS = {
	name: { fieldLabel: 'Name', fieldType: 'text', requiredField: true },
	date: { fieldLabel: 'Delivery date', fieldType: 'date', requiredField: true },
	amount: { fieldLabel: 'Amount', fieldType: 'number' },
	email: { fieldLabel: 'Email', fieldType: 'email' },
	reason: { fieldLabel: 'Reason', fieldType: 'textarea' },
	slot: { fieldLabel: 'Slot', fieldType: 'dropdown', fieldOptions: choices('Morning', 'Evening') },
	extras: {
		fieldLabel: 'Extras',
		fieldType: 'checkbox',
		fieldOptions: choices('Gift wrap', 'Call first'),
	},
	carrier: { fieldLabel: 'Carrier', fieldType: 'radio', fieldOptions: choices('DHL', 'UPS') },
	pin: { fieldLabel: 'PIN', fieldType: 'password' },
};
/** One field posted as `field-0`: the answer, or the problems. */
const answer = (/** @type {string} */ field, /** @type {unknown} */ posted) =>
	readFormAnswer([FIELDS[field]], posted === undefined ? {} : { 'field-0': posted });

// [case, field, what is posted, what the workflow gets or the problem]. What every type records
// (text trimmed, numbers typed, the hidden field's own value, empty optional fields) and that a
// refusal records nothing: the property in test/node/send-and-wait.test.js; here, the wording
// (a required text left blank, and a file field's refusal: that file's engine tests).
/** @type {Array<[string, string, unknown, any]>} */
const ANSWERS = [
	['an email address', 'email', ' jane@customer.test ', 'jane@customer.test'],
	['refused: a required date missing', 'date', undefined, { problem: 'Delivery date is required' }],
	['refused: a number that is not one', 'amount', 'twelve', { problem: 'Amount: enter a number' }],
	[
		'refused: a date that does not exist',
		'date',
		'2031-02-30',
		{ problem: 'Delivery date: enter a date' },
	],
	[
		'refused: a date in another format',
		'date',
		'04/05/2031',
		{ problem: 'Delivery date: enter a date' },
	],
	[
		'refused: an email address that is not one',
		'email',
		'jane@',
		{ problem: 'Email: enter an email address' },
	],
	[
		'refused: a dropdown value not offered',
		'slot',
		'Midnight',
		{ problem: 'Slot: choose one of the options' },
	],
	[
		'refused: a checkbox not offered',
		'extras',
		['Gift wrap', 'Free'],
		{ problem: 'Extras: choose among' },
	],
	[
		'refused: a checkbox twice',
		'extras',
		['Gift wrap', 'Gift wrap'],
		{ problem: 'Extras: choose among' },
	],
	[
		'refused: two radio answers',
		'carrier',
		['DHL', 'UPS'],
		{ problem: 'Carrier takes one answer' },
	],
	[
		'refused: a value too long',
		'reason',
		'x'.repeat(10_001),
		{ problem: 'Reason: the answer is not valid' },
	],
	[
		'refused: an object for a text',
		'name',
		{ name: 'Jane' },
		{ problem: 'Name: the answer is not valid' },
	],
];

describe('readFormAnswer: each field as the workflow gets it, or its problem', () => {
	test.each(ANSWERS)('%s', (_, field, posted, expected) => {
		const result = /** @type {any} */ (answer(field, posted));
		const label = FIELDS[field];
		if (expected?.problem)
			expect(result.problems).toEqual([expect.stringContaining(expected.problem)]);
		else expect(result).toEqual({ answer: { [label.fieldLabel ?? label.fieldName]: expected } });
	});

	test('fields other than field-<index> are ignored', () => {
		const posted = { 'field-0': '1', 'field-1': 'x', approved: 'true' };
		expect(readFormAnswer([FIELDS.pin], posted)).toEqual({ answer: { PIN: '1' } });
	});
});

describe('readFormFields: a form that cannot work is refused before sending', () => {
	const parameter =
		(/** @type {Record<string, unknown>} */ set) =>
		(/** @type {string} */ name, /** @type {unknown} */ fallback) =>
			name in set ? set[name] : fallback;
	const fields = (/** @type {unknown[]} */ values) => parameter({ 'formFields.values': values });
	const json = (/** @type {string} */ jsonOutput) => parameter({ defineForm: 'json', jsonOutput });

	test.each([
		[
			'two fields with one label',
			fields([{ fieldLabel: 'Date' }, { fieldLabel: 'Date', fieldType: 'date' }]),
			'Two form fields are called "Date"',
		],
		['a field without label', fields([{ fieldType: 'text' }]), 'A form field has no Field Label'],
		[
			'a hidden field without name',
			fields([{ fieldType: 'hiddenField', fieldValue: 'x' }]),
			'A form field has no Field Name',
		],
		[
			'a dropdown without options',
			fields([{ fieldLabel: 'Slot', fieldType: 'dropdown' }]),
			'Form field "Slot" has no options',
		],
		['JSON that is not JSON', json('[{ "fieldLabel": '), 'Form Fields (JSON) is not valid'],
		[
			'JSON with a key fields lack',
			json('[{ "fieldLabel": "A", "colour": "red" }]'),
			"Key 'colour' in field 0 is not valid",
		],
	])('%s', (_, read, message) => {
		expect(() => readFormFields(read)).toThrow(
			expect.objectContaining({ kind: 'invalid_input', message: expect.stringContaining(message) }),
		);
	});

	test('a field without type is text; JSON fields read like the others', () => {
		expect(readFormFields(fields([{ fieldLabel: 'A' }]))).toEqual([
			{ fieldLabel: 'A', fieldType: 'text' },
		]);
		expect(readFormFields(json('[{ "fieldLabel": "A", "fieldType": "number" }]'))).toEqual([
			{ fieldLabel: 'A', fieldType: 'number' },
		]);
	});
});
