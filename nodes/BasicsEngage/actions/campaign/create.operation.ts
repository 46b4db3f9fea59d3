import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionsCollection, retryOptions } from '../../helpers/options';
import { isObject, readIdList, readOptionalText, readText, readTrimmed } from '../../helpers/read';
import type { DeclareRequests, SuccessContract } from '../../transport';

/** The published success of /campaign/create: the stored campaign, its ID in `_id`. */
const campaignCreated: SuccessContract = {
	check: (data) => {
		if (!isObject(data.campaign)) return 'it has no "campaign" object';
		const id = data.campaign._id;
		return typeof id === 'string' && id.trim() !== '' ? undefined : 'it has no "campaign._id"';
	},
	effect: 'the campaign may have been created',
};

// The `campaign` prefix of campaignSubject, campaignHtml and campaignText is kept on purpose:
// workflows saved with 0.1.0 store these names, and the editor shows Subject, HTML and Text.
const properties: INodeProperties[] = [
	{
		displayName: 'Campaign Name',
		name: 'campaignName',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Spring sale',
		description: 'A name for the campaign',
		hint: 'One new campaign per input item',
	},
	{
		displayName: 'Subject',
		name: 'campaignSubject',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 20% off everything this weekend',
		description: 'Subject line of the campaign email',
	},
	{
		displayName: 'Content',
		name: 'contentFormat',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'HTML', value: 'html', description: 'Write the content as HTML' },
			{ name: 'Plain Text', value: 'text', description: 'Write the content as plain text' },
		],
		default: 'html',
		description:
			'What the content is written in. BasicsEngage takes either in its one content field.',
	},
	{
		displayName: 'HTML',
		name: 'campaignHtml',
		type: 'string',
		typeOptions: { rows: 6 },
		default: '',
		placeholder: 'e.g. <p>Hi, our spring sale starts today!</p>',
		description: 'HTML content of the campaign email',
		displayOptions: { show: { contentFormat: ['html'] } },
	},
	{
		displayName: 'Text',
		name: 'campaignText',
		type: 'string',
		typeOptions: { rows: 6 },
		default: '',
		placeholder: 'e.g. Hi, our spring sale starts today!',
		description: 'Plain text content of the campaign email',
		displayOptions: { show: { contentFormat: ['text'] } },
	},
	{
		displayName: 'Recipient List IDs',
		name: 'recipientListIds',
		type: 'string',
		default: '',
		placeholder: 'e.g. list_3f9a0c2b7d4e8a61, list_8c1d5e0f2a3b4c96',
		description:
			'IDs of the lists that receive the campaign, separated by commas, or a list of IDs from an expression',
		hint: "Type or map them, such as Create List's 'listId' (there is no dropdown). Without a list, the campaign reaches no one.",
	},
	optionsCollection(
		retryOptions('the campaign may exist already, and sending again would create a second one'),
	),
];

const displayOptions = { show: { resource: ['campaign'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/** One campaign per input item, created one at a time in input order, never twice. */
export const requests: DeclareRequests = function () {
	return {
		path: '/campaign/create',
		body: (itemIndex) => readCreateCampaign(this, itemIndex),
		contract: campaignCreated,
		// What the answer says, never the input: the published example answer names another
		// campaign than its request, so an echo of the input could claim what did not happen.
		toJson: (answer) => {
			const campaign = (answer.data as IDataObject).campaign as IDataObject;
			return { campaignId: campaign._id, name: campaign.name, subject: campaign.subject };
		},
		repeatable: false,
		done: 'Created',
	};
};

function readCreateCampaign(context: IExecuteFunctions, itemIndex: number): IDataObject {
	const name = readTrimmed(context.getNodeParameter('campaignName', itemIndex), 'Campaign Name');
	const subject = readText(context.getNodeParameter('campaignSubject', itemIndex), 'Subject');
	const format = context.getNodeParameter('contentFormat', itemIndex) as 'html' | 'text';
	const content = readOptionalText(
		context.getNodeParameter(format === 'text' ? 'campaignText' : 'campaignHtml', itemIndex, ''),
		format === 'text' ? 'Text' : 'HTML',
	);
	const listIds = readIdList(
		context.getNodeParameter('recipientListIds', itemIndex, ''),
		'Recipient List IDs',
	);
	return {
		name,
		subject,
		...(content === undefined ? {} : { content }),
		...(listIds.length > 0
			? {
					recepientList: listIds,
					// Published only misspelled, with no word on whether that is the name the server
					// reads (as the list call sends both header spellings, this sends both names).
					// The `_id` suggests a MongoDB document, whose schema drops a field it does not
					// know: the correctly spelled twin costs nothing where `recepientList` is read,
					// and carries the lists where the documented spelling is the typo. Tested
					// against a server that reads only one spelling, only the other, or both.
					recipientList: listIds,
				}
			: {}),
	};
}
