import type { INodeExecutionData, NodeApiError, NodeOperationError } from 'n8n-workflow';

/**
 * Where n8n 1.x and 2.x differ in what a node sees or hands back, shaped to work on both (never
 * chosen by version). test/harness/engine-differences.test.js pins each difference down.
 */

/**
 * Marks an item for n8n's error output. n8n 2.x routes such json to the error output by its keys
 * alone; n8n 1.x only moves items that carry `item.error`, and both later replace the json of
 * any item still carrying `item.error` with the bare message. So `error` is non-enumerable: both
 * engines see it when routing, and the copy they route (built with object spread, merged with
 * the input's fields) no longer has it, so `details` survives.
 */
export function markForErrorOutput(
	item: INodeExecutionData,
	error: NodeApiError | NodeOperationError,
): void {
	Object.defineProperty(item, 'error', { value: error, enumerable: false });
}

/**
 * Sets n8n's `failure.cause`, which tells n8n (and AI agents) why a node failed. Assigned rather
 * than passed as an option: n8n-workflow 1.x ignores the option, and a plain field reaches n8n
 * either way.
 */
export function setFailureCause(error: NodeApiError | NodeOperationError, cause: string): void {
	error.failure = { cause } as NodeApiError['failure'];
}

/**
 * n8n wraps transport errors in NodeApiError; the socket's code sits on the wrapped cause. n8n 1.x
 * drops that cause and keeps only the original messages ("connect ECONNREFUSED …", "timeout of
 * 300ms exceeded"), so the code is read from them there.
 */
export function socketErrorCode(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
		const { code, cause } = current as { code?: unknown; cause?: unknown };
		if (typeof code === 'string' && code !== '') return code;
		current = cause;
	}
	const { message, messages } = (error ?? {}) as { message?: unknown; messages?: unknown };
	for (const text of [...(Array.isArray(messages) ? messages : []), message]) {
		if (typeof text !== 'string') continue;
		if (/timeout of \d+ms exceeded/.test(text)) return 'ETIMEDOUT';
		const code = /\b(E[A-Z]{4,}(?:_[A-Z]+)*)\b/.exec(text)?.[1];
		if (code) return code;
	}
	return undefined;
}
