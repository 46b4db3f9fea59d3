// @ts-check
'use strict';

const { addProfilesBody, ADD_PROFILES_HEADERS } = require('../scenarios');

/**
 * The least a node that maps fields by name and sends through n8n's helper can cost: takes
 * `email`, `firstName` and `lastName` from each item as they are (no check, no parameter per
 * item), and posts the same batches as Add Profiles with this.helpers.httpRequest, one batch at
 * a time, with the same headers. No validation, retries, error mapping or output shaping.
 * Map Automatically's reference in the `auto` part of `npm run bench`.
 */
class BenchFloorAddProfilesHttp {
	constructor() {
		/** @type {import('n8n-workflow').INodeTypeDescription} */
		this.description = {
			displayName: 'Bench Floor: Add Profiles with n8n HTTP helper',
			name: 'benchFloorAddProfilesHttp',
			group: ['transform'],
			version: 1,
			description: 'Posts its items in batches with n8n’s HTTP helper and returns one item a batch',
			defaults: { name: 'Bench Floor: Add Profiles with n8n HTTP helper' },
			inputs: [/** @type {any} */ ('main')],
			outputs: [/** @type {any} */ ('main')],
			properties: [
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
				{ displayName: 'Batch Size', name: 'batchSize', type: 'number', default: 100 },
			],
		};
	}

	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const items = this.getInputData();
		const url = /** @type {string} */ (this.getNodeParameter('url', 0));
		const batchSize = /** @type {number} */ (this.getNodeParameter('batchSize', 0));
		const output = [];
		for (let start = 0; start < items.length; start += batchSize) {
			const batch = items.slice(start, start + batchSize);
			const body = addProfilesBody(batch.map((item) => /** @type {any} */ (item.json)));
			const json = await this.helpers.httpRequest({
				method: 'POST',
				url,
				headers: ADD_PROFILES_HEADERS,
				body,
				json: true,
			});
			output.push({ json, pairedItem: batch.map((_, index) => ({ item: start + index })) });
		}
		return [output];
	}
}

module.exports = { BenchFloorAddProfilesHttp };
