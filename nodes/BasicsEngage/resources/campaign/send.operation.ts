import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { SuccessContract } from '../../shared/answers';
import type { ApiFailure } from '../../shared/errors';
import { optionsCollection } from '../../shared/properties';
import type { OperationRun } from '../../shared/run';
import type { OperationOutput } from '../../shared/output';
import { notSentFailure } from '../../shared/output';
import { runPerItem } from '../../shared/perItem';
import { readRetryPolicy, retryOptionsUntilSent } from '../../shared/retry';
import { keepServerValue, MAX_ERROR_TEXT } from '../../shared/serverText';
import { readOptions } from '../../shared/settings';
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
	optionsCollection(
		retryOptionsUntilSent(
			'the campaign may have started, and sending it again could mail every recipient twice',
		),
	),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['campaign'], operation: ['send'] } },
	properties,
);

/**
 * One send per input item, one at a time: each starts a bulk mailing, so none waits beside
 * another and a 401 or 429 stops the run before the next. A request that may have reached
 * BasicsEngage is never sent again, neither by the retry options nor by n8n's Retry On Fail.
 */
export async function execute(
	this: IExecuteFunctions,
	{ memory, settings }: OperationRun,
): Promise<OperationOutput> {
	const options = readOptions(this, 'options');
	const keep = (value: unknown) => keepServerValue(value, settings.secrets, MAX_ERROR_TEXT);
	return await runPerItem(this, memory, settings, {
		read: (itemIndex) => ({
			path: '/campaign/send',
			body: {
				campaignId: readTrimmed(this.getNodeParameter('campaignId', itemIndex), 'Campaign ID'),
			},
			contract: sendingStarted,
		}),
		concurrency: 1,
		// Never `true`: a second send of a campaign that may have started mails a whole list twice.
		retryPolicy: readRetryPolicy(options, false),
		toJson: (body, request) => ({
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
			notSent,
		},
	});
}

/** A failure after the request may have arrived says, in its message too, what that means. */
function mayHaveStarted(failure: ApiFailure): ApiFailure {
	if (!failure.mayHaveTakenEffect) return failure;
	return {
		...failure,
		message: `${failure.message} (the campaign may have started sending)`,
		description: `${failure.description} Do not send this campaign again before checking in BasicsEngage whether it is sending: a second send could mail every profile of its lists twice.`,
	};
}

function notSent(cause: ApiFailure | undefined): ApiFailure {
	return notSentFailure(
		cause,
		'an earlier request of this run failed',
		'This campaign was not sent, so it can be sent later',
	);
}
