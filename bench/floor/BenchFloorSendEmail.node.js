// @ts-check
'use strict';

/**
 * n8n's floor for Send Email: the engine cost of reading the per-item parameters (`to`, `from`,
 * `subject`, `content`, `html`) with this.getNodeParameter, and nothing else. Declared with the
 * same parameter shapes as the BasicsEngage node.
 */
class BenchFloorSendEmail {
	constructor() {
		/** @type {import('n8n-workflow').INodeTypeDescription} */
		this.description = {
			displayName: 'Bench Floor: Send Email',
			name: 'benchFloorSendEmail',
			group: ['transform'],
			version: 1,
			description: 'Reads the per-item parameters of Send Email and returns its input',
			defaults: { name: 'Bench Floor: Send Email' },
			inputs: [/** @type {any} */ ('main')],
			outputs: [/** @type {any} */ ('main')],
			properties: [
				{ displayName: 'To', name: 'to', type: 'string', required: true, default: '' },
				{ displayName: 'From', name: 'from', type: 'string', required: true, default: '' },
				{ displayName: 'Subject', name: 'subject', type: 'string', required: true, default: '' },
				{
					displayName: 'Content',
					name: 'content',
					type: 'options',
					noDataExpression: true,
					options: [
						{ name: 'HTML', value: 'html' },
						{ name: 'Plain Text', value: 'text' },
						{ name: 'Template', value: 'template' },
					],
					default: 'html',
				},
				{
					displayName: 'HTML',
					name: 'html',
					type: 'string',
					typeOptions: { rows: 6 },
					required: true,
					default: '',
					displayOptions: { show: { content: ['html'] } },
				},
			],
		};
	}

	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const items = this.getInputData();
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			this.getNodeParameter('to', itemIndex);
			this.getNodeParameter('from', itemIndex);
			this.getNodeParameter('subject', itemIndex);
			this.getNodeParameter('content', itemIndex);
			this.getNodeParameter('html', itemIndex);
		}
		return [items];
	}
}

module.exports = { BenchFloorSendEmail };
