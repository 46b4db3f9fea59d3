// @ts-check
'use strict';

/**
 * n8n's engine floor for Map Automatically: a node that reads no parameter and hands its input
 * on. What the engine costs to run any node over the items, before the node does anything.
 */
class BenchFloorPassThrough {
	constructor() {
		/** @type {import('n8n-workflow').INodeTypeDescription} */
		this.description = {
			displayName: 'Bench Floor: Pass Through',
			name: 'benchFloorPassThrough',
			group: ['transform'],
			version: 1,
			description: 'Reads no parameter and returns its input',
			defaults: { name: 'Bench Floor: Pass Through' },
			inputs: [/** @type {any} */ ('main')],
			outputs: [/** @type {any} */ ('main')],
			properties: [],
		};
	}

	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		return [this.getInputData()];
	}
}

module.exports = { BenchFloorPassThrough };
