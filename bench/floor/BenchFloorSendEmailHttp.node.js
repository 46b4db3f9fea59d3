// @ts-check
'use strict';

const { BenchFloorSendEmail } = require('./BenchFloorSendEmail.node');

/**
 * n8n's floor for Send Email *with* its HTTP helper: reads the same per-item parameters as
 * BenchFloorSendEmail, then posts each item's body with this.helpers.httpRequest (n8n-core's
 * own HTTP stack) at the given concurrency, with the Authorization header built once. No
 * validation, retries, error mapping or output shaping: the least any node that sends through
 * n8n's helpers can cost. Informational row of `npm run bench`, not part of the goals.
 */
class BenchFloorSendEmailHttp {
	constructor() {
		const base = new BenchFloorSendEmail().description;
		/** @type {import('n8n-workflow').INodeTypeDescription} */
		this.description = {
			...base,
			displayName: 'Bench Floor: Send Email with n8n HTTP helper',
			name: 'benchFloorSendEmailHttp',
			defaults: { name: 'Bench Floor: Send Email with n8n HTTP helper' },
			properties: [
				...base.properties,
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
				{ displayName: 'API Key', name: 'apiKey', type: 'string', default: '' },
				{ displayName: 'Concurrency', name: 'concurrency', type: 'number', default: 1 },
			],
		};
	}

	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const items = this.getInputData();
		const url = /** @type {string} */ (this.getNodeParameter('url', 0));
		const headers = {
			'Content-Type': 'application/json',
			Accept: 'application/json',
			Authorization: `Bearer ${this.getNodeParameter('apiKey', 0)}`,
		};
		const concurrency = /** @type {number} */ (this.getNodeParameter('concurrency', 0));
		const bodies = items.map((_, itemIndex) => ({
			to: this.getNodeParameter('to', itemIndex),
			from: this.getNodeParameter('from', itemIndex),
			subject: this.getNodeParameter('subject', itemIndex),
			...{
				[/** @type {string} */ (this.getNodeParameter('content', itemIndex))]:
					this.getNodeParameter('html', itemIndex),
			},
		}));
		let next = 0;
		const lane = async () => {
			while (next < bodies.length) {
				const body = bodies[next++];
				await this.helpers.httpRequest({ method: 'POST', url, headers, body, json: true });
			}
		};
		await Promise.all(Array.from({ length: concurrency }, lane));
		return [items];
	}
}

module.exports = { BenchFloorSendEmailHttp };
