import type { INodeProperties } from 'n8n-workflow';
import { SEND_AND_WAIT_OPERATION } from 'n8n-workflow';

import type { DeclareRequests } from '../transport';
import { invalidInput } from '../helpers/failure';
import * as createCampaign from './campaign/create.operation';
import * as sendCampaign from './campaign/send.operation';
import * as sendEmail from './email/send.operation';
import * as sendAndWait from './email/sendAndWait.operation';
import * as addProfiles from './list/addProfiles.operation';
import * as createList from './list/create.operation';

const RESOURCES = { email: 'Email', list: 'List', campaign: 'Campaign' };

interface Operation {
	resource: keyof typeof RESOURCES;
	/** The `operation` parameter's value. */
	value: string;
	name: string;
	action: string;
	description: string;
	module: { description: INodeProperties[]; requests: DeclareRequests };
}

/** Every operation of the node: its menus and its router are made from this list. */
export const OPERATIONS: Operation[] = [
	{
		resource: 'email',
		value: 'send',
		name: 'Send',
		action: 'Send an email',
		description: 'Queue one transactional email per input item',
		module: sendEmail,
	},
	{
		resource: 'email',
		value: SEND_AND_WAIT_OPERATION,
		name: 'Send and Wait for Response',
		action: 'Send an email and wait for a response',
		description:
			'Send one email with approval buttons or a link to a form, and pause the workflow until the recipient answers',
		module: sendAndWait,
	},
	{
		resource: 'list',
		value: 'addProfiles',
		name: 'Add Profiles to List',
		action: 'Add profiles to a list',
		description: 'Add the input items as profiles to a list, in batches',
		module: addProfiles,
	},
	{
		resource: 'list',
		value: 'create',
		name: 'Create',
		action: 'Create a list',
		description: 'Create one list per input item, empty or with existing profiles by ID',
		module: createList,
	},
	{
		resource: 'campaign',
		value: 'create',
		name: 'Create',
		action: 'Create a campaign',
		description: 'Create one campaign per input item, to be sent with Send Campaign',
		module: createCampaign,
	},
	{
		resource: 'campaign',
		value: 'send',
		name: 'Send',
		action: 'Send a campaign to every profile of its lists',
		description:
			"Start mailing every profile of the campaign's lists. Never sent again after a request that may have reached BasicsEngage.",
		module: sendCampaign,
	},
];

/** Stands for an operation this version does not have: it fails every item, sending nothing. */
export function unsupported(resource: string, operation: string): DeclareRequests {
	// A workflow saved by a newer version of this node, say.
	return () => {
		throw invalidInput(
			`The operation "${operation}" of resource "${resource}" is not supported`,
			'Pick the resource and operation again in the node, or update the BasicsEngage package.',
		);
	};
}

/** The Resource and Operation menus, then every operation's own parameters. */
export const properties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: Object.entries(RESOURCES)
			.map(([value, name]) => ({ name, value }))
			.sort((a, b) => a.name.localeCompare(b.name)),
		default: 'email',
	},
	...Object.keys(RESOURCES).map((resource): INodeProperties => {
		const entries = OPERATIONS.filter((entry) => entry.resource === resource);
		const options = entries
			.map(({ value, name, action, description }) => ({ value, name, action, description }))
			.sort((a, b) => a.name.localeCompare(b.name));
		// The resource's first operation in OPERATIONS, whatever the menu's order: n8n saves no
		// parameter at its default, so a new operation must never become a saved node's.
		const firstOperation = entries[0].value;
		return {
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource] } },
			options,
			default: firstOperation,
		};
	}),
	...OPERATIONS.flatMap((entry) => entry.module.description),
];
