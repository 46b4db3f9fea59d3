// The example workflows, Send and Wait, the MCP server and the retry of an execution, in one real
// n8n server (shared.mjs) instead of one each. Under n8n 1.x (`npm run test:e2e:v1`) the part whose
// behaviour differs between the lines: every example (one workflow per operation), Send and Wait,
// and the MCP Server Trigger.
import './workflows.mjs';
import './send-and-wait.mjs';
import './mcp.mjs';

if (process.env.N8N_DEV_RUNTIME !== 'v1') await import('./retry-execution.mjs');
