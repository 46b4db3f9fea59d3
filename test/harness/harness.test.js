// @ts-check
'use strict';

/**
 * The one behaviour of the harness no node test would notice losing: the capture of n8n's log
 * lines. Every "the API key is in no log line" check reads it, and would pass on an empty one.
 */

const path = require('node:path');
const { runWorkflow, getLogs, clearLogs } = require('./n8n');
const { startSandbox } = require('../sandbox/server');

test("n8n's log lines are captured with their metadata", async () => {
	const sandbox = await startSandbox();
	try {
		clearLogs();
		const result = await runWorkflow({
			packageDir: path.resolve(__dirname, '../..'),
			nodeType: 'n8n-nodes-basicsengage.basicsEngage',
			parameters: {
				resource: 'list',
				operation: 'create',
				listName: 'Logged',
				listDescription: 'Logs',
			},
			credentials: { basicsEngageApi: { apiKey: 'be_sandbox_demo_key', baseUrl: sandbox.baseUrl } },
		});
		expect(result.error).toBeUndefined();
		expect(getLogs().slice(-result.logs.length)).toEqual(result.logs);
		expect(result.logs).toContainEqual(
			expect.stringMatching(/Start executing node.*"node":"Node Under Test"/),
		);
	} finally {
		await sandbox.close();
	}
});
