import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { SuccessContract } from '../../shared/answers';
import type { ApiFailure } from '../../shared/errors';
import { oneAtATime, oneAtATimeOptions } from '../../shared/oneAtATime';
import { readTrimmed } from '../../shared/validation';

/**
 * /campaign/send's answer is not published: a 2xx with `status: "success"` means the sending
 * started (in the background, as the API says), whatever else it holds.
 */
const sendingStarted: SuccessContract = {
	check: () => undefined,
	dataOptional: true,
	effect: 'the campaign may have started sending',
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
		hint: "Type it or map it, such as Create Campaign's campaignId. BasicsEngage publishes no way to list its campaigns, so there is no dropdown.",
	},
	oneAtATimeOptions(
		'the campaign may have started, and sending it again could mail every recipient twice',
	),
];

const displayOptions = { show: { resource: ['campaign'], operation: ['send'] } };

export const description = updateDisplayOptions(displayOptions, properties);

/**
 * One send per input item: each starts a bulk mailing, so none waits beside another. A send
 * that may have reached BasicsEngage is never sent again: it could mail a whole list twice.
 */
export const execute = oneAtATime({
	path: '/campaign/send',
	contract: sendingStarted,
	readBody: (context, itemIndex) => ({
		campaignId: readTrimmed(context.getNodeParameter('campaignId', itemIndex), 'Campaign ID'),
	}),
	toJson: (body, request, keep) => ({
		// The ID this item sent; the answer's own fields follow as they came.
		campaignId: request.body.campaignId,
		sendingStarted: true,
		...(body.message === undefined ? {} : { message: keep(body.message) }),
		...(body.data === undefined ? {} : { data: keep(body.data) }),
	}),
	explain: mayHaveStarted,
	wording: {
		done: 'Started sending',
		noneDone: 'No other campaign of this run started sending.',
		mayHaveBeenDone: 'May have started sending',
		notSent: 'This campaign was not sent, so it can be sent later',
	},
});

/** A failure after the request may have arrived says, in its message too, what that means. */
function mayHaveStarted(failure: ApiFailure): ApiFailure {
	if (!failure.mayHaveTakenEffect) return failure;
	return {
		...failure,
		message: `${failure.message} (the campaign may have started sending)`,
		description: `${failure.description} Do not send this campaign again before checking in BasicsEngage whether it is sending: a second send could mail every profile of its lists twice.`,
	};
}
