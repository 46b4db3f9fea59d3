import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { optionsCollection, retryOptions } from '../../helpers/options';
import { readTrimmed } from '../../helpers/read';
import type { DeclareRequests, SuccessContract } from '../../transport';

/**
 * /campaign/send's answer is not published: a 2xx with `status: "success"` means the sending
 * started (in the background, as the API says), whatever else it holds.
 */
const sendingStarted: SuccessContract = {
	check: () => undefined,
	dataOptional: true,
	effect: 'the campaign may have started sending',
	warning:
		'Do not send this campaign again before checking in BasicsEngage whether it is sending: a second send could mail every profile of its lists twice.',
};

const properties: INodeProperties[] = [
	{
		displayName:
			"Sends to every profile of the campaign's lists. After a server error, a dropped connection or a timeout the campaign is never sent again, whatever the retry settings: check in BasicsEngage first.",
		name: 'sendCampaignNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Campaign ID',
		name: 'campaignId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 66f1c0ffee0123456789abcd',
		description: 'ID of the campaign to send',
		hint: "Type or map it, such as Create Campaign's 'campaignId': BasicsEngage publishes no way to list campaigns, so no dropdown",
	},
	optionsCollection(
		retryOptions(
			'the campaign may have started, and sending it again could mail every recipient twice',
		),
	),
];

const displayOptions = { show: { resource: ['campaign'], operation: ['send'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/**
 * One send per input item, one at a time: each starts a bulk mailing. A send that may have
 * reached BasicsEngage is never sent again: it could mail a whole list twice.
 */
export const requests: DeclareRequests = function () {
	return {
		path: '/campaign/send',
		body: (itemIndex) => ({
			campaignId: readTrimmed(this.getNodeParameter('campaignId', itemIndex), 'Campaign ID'),
		}),
		contract: sendingStarted,
		// The ID this item sent; the answer's own fields follow as they came.
		toJson: (answer, sent) => ({
			campaignId: sent.campaignId,
			sendingStarted: true,
			...(answer.message === undefined ? {} : { message: answer.message }),
			...(answer.data === undefined ? {} : { data: answer.data }),
		}),
		repeatable: false,
		done: 'Started sending',
	};
};
