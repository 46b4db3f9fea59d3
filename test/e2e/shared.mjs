// The one n8n server of server.e2e.mjs (sandbox, credential and examples imported), shared by the
// files it imports: each uses its own workflow ids, form and MCP paths; the sandbox (its requests,
// state and options) is reset before each test.
import { startTestEnvironment } from './helpers.mjs';

export let env;
/** Every sandbox answer since the start, kept across resets: what a run resumed during a later test sent. */
export const answers = [];

beforeAll(async () => {
	env = await startTestEnvironment({ onSandboxResponse: (entry) => answers.push(entry) });
}, 300_000);

afterAll(() => env?.stop(), 60_000);

beforeEach(() => env.sandbox.reset());
