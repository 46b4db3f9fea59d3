// @ts-check
'use strict';

/**
 * n8n's floor for Add Profiles: the engine cost of reading the per-item parameters (`email`,
 * `additionalFields`) with this.getNodeParameter, and nothing else. Declared with the same
 * parameter shapes as the BasicsEngage node, so n8n resolves them the same way.
 */
class BenchFloorAddProfiles {
	constructor() {
		/** @type {import('n8n-workflow').INodeTypeDescription} */
		this.description = {
			displayName: 'Bench Floor: Add Profiles',
			name: 'benchFloorAddProfiles',
			group: ['transform'],
			version: 1,
			description: 'Reads the per-item parameters of Add Profiles and returns its input',
			defaults: { name: 'Bench Floor: Add Profiles' },
			inputs: [/** @type {any} */ ('main')],
			outputs: [/** @type {any} */ ('main')],
			properties: [
				{
					displayName: 'Email',
					name: 'email',
					type: 'string',
					required: true,
					default: '={{ $json.email }}',
				},
				{
					displayName: 'Additional Fields',
					name: 'additionalFields',
					type: 'collection',
					placeholder: 'Add Field',
					default: {},
					options: [
						{ displayName: 'First Name', name: 'firstName', type: 'string', default: '' },
						{ displayName: 'Last Name', name: 'lastName', type: 'string', default: '' },
					],
				},
			],
		};
	}

	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const items = this.getInputData();
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			this.getNodeParameter('email', itemIndex);
			this.getNodeParameter('additionalFields', itemIndex, {});
		}
		return [items];
	}
}

module.exports = { BenchFloorAddProfiles };
