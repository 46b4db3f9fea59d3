// @ts-check
'use strict';

const { contacts, runNode, sendParameters, useSandbox } = require('../support');

const sandbox = useSandbox({ dailyLimit: 1000 });

const sentBodies = () => sandbox.requestsTo('/email/send').map((request) => request.body);

describe('Send Email', () => {
	// Concurrency and output order: test/node/operations.test.js.
	test('spec: only one of html, text, templateId is sent (content selector)', async () => {
		for (const content of ['html', 'text', 'template']) {
			sandbox.reset();
			await runNode(sandbox, {
				parameters: sendParameters({
					content,
					html: '<p>Hi</p>',
					text: 'Hi',
					templateId: 'tmpl_welcome',
				}),
				items: contacts(1),
			});
			const body = sentBodies()[0];
			const contentFields = ['html', 'text', 'templateId'].filter((field) => field in body);
			expect(contentFields).toEqual([content === 'template' ? 'templateId' : content]);
		}
	});

	test('template with JSON variables: the object is sent as given; without variables, no templateVariables field', async () => {
		const template = { content: 'template', templateId: 'tmpl_welcome' };
		const json = '={{ JSON.stringify({ firstName: $json.firstName, company: "Acme, Inc." }) }}';
		await runNode(sandbox, {
			parameters: sendParameters({
				...template,
				templateVariablesMode: 'json',
				templateVariablesJson: json,
			}),
			items: contacts(1),
		});
		await runNode(sandbox, { parameters: sendParameters(template), items: contacts(1) });
		const [withVariables, without] = sentBodies();
		expect(withVariables.templateVariables).toEqual({ firstName: 'First0', company: 'Acme, Inc.' });
		expect(without).not.toHaveProperty('templateVariables');
	});

	test('expressions are resolved per item for every field', async () => {
		const items = [
			{ email: 'a@customer.test', name: 'Ann', plan: 'pro' },
			{ email: 'b@customer.test', name: 'Bob', plan: 'free' },
		];
		await runNode(sandbox, {
			parameters: sendParameters({
				subject: '=Hi {{ $json.name }}',
				text: '=Your plan: {{ $json.plan }}',
			}),
			items,
		});
		expect(sentBodies().map((body) => [body.to, body.subject, body.text])).toEqual([
			['a@customer.test', 'Hi Ann', 'Your plan: pro'],
			['b@customer.test', 'Hi Bob', 'Your plan: free'],
		]);
	});
});
