import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { SuccessContract } from './answers';
import type { ApiFailure } from './errors';
import type { OperationOutput } from './output';
import type { OperationRun, RunWording } from './perItem';
import { runPerItem } from './perItem';
import { optionsCollection } from './properties';
import { readRetryPolicy, retryOptionsUntilSent } from './retry';
import { keepServerValue, MAX_ERROR_TEXT } from './serverText';
import { readOptions } from './settings';
import type { ApiPath, ApiRequest } from './transport';

type KeepServerValue = (value: unknown) => IDataObject[string];

/** An operation that creates or starts one thing per input item (a list, a campaign, a send). */
export interface OneAtATimeOperation {
	path: ApiPath;
	contract: SuccessContract;
	/** The item's request body; what it throws fails this item only. */
	readBody: (context: IExecuteFunctions, itemIndex: number) => IDataObject;
	/** The output json of a success; `keep` makes a value from the answer safe to output. */
	toJson: (body: IDataObject, request: ApiRequest, keep: KeepServerValue) => IDataObject;
	explain?: (failure: ApiFailure, request: ApiRequest) => ApiFailure;
	wording: RunWording;
}

/**
 * The `execute` of an operation that sends one request per input item, paired to it, one at a
 * time and in input order: a run creates few things, and a 401 or 429 stops it after one
 * request. A request that may have arrived is never sent again (by the Retries option or by
 * n8n's Retry On Fail), since a second one could create or start a second thing.
 */
export function oneAtATime(operation: OneAtATimeOperation) {
	const { path, contract, readBody, toJson } = operation;
	return async function execute(
		this: IExecuteFunctions,
		{ memory, settings }: OperationRun,
	): Promise<OperationOutput> {
		const keep: KeepServerValue = (value) =>
			keepServerValue(value, settings.secrets, MAX_ERROR_TEXT);
		return await runPerItem(this, memory, settings, {
			read: (itemIndex) => ({ path, body: readBody(this, itemIndex), contract }),
			concurrency: 1,
			retryPolicy: readRetryPolicy(readOptions(this, 'options'), false),
			toJson: (body, request) => toJson(body, request, keep),
			explain: operation.explain,
			wording: operation.wording,
		});
	};
}

/** How a create operation's errors name what other requests of the run created. */
export function createdWording(noun: 'list' | 'campaign'): RunWording {
	return {
		done: 'Created',
		noneDone: `No other ${noun} of this run was created.`,
		mayHaveBeenDone: 'May have been created',
		notSent: `This ${noun} was not created, so it can be created later`,
	};
}

/** Such an operation's Options: its retries are only for requests that provably never arrived. */
export function oneAtATimeOptions(consequence: string): INodeProperties {
	return optionsCollection(retryOptionsUntilSent(consequence));
}
