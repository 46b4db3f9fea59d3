// The example workflows, Send and Wait, the MCP server and the retry of an execution, in one real
// n8n server (shared.mjs) instead of one each. Under n8n 1.x (`npm run test:e2e:v1`) the part of
// the suite whose behaviour differs between the lines: one workflow per operation and Send and Wait.
import './workflows.mjs';
import './send-and-wait.mjs';

if (process.env.N8N_DEV_RUNTIME !== 'v1') {
	await import('./mcp.mjs');
	await import('./retry-execution.mjs');
}
