import type { INodeProperties } from 'n8n-workflow';

/** An operation's "Options" collection: the same frame around each operation's own options. */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options,
	};
}
