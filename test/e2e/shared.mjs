// The one n8n server of server.e2e.mjs (sandbox, credential and examples imported), shared by the
// files it imports: each uses its own workflow ids, form and MCP paths; the sandbox (its requests,
// state and options) is reset before each test.
import { startTestEnvironment } from './helpers.mjs';

export let env;

beforeAll(async () => {
	env = await startTestEnvironment();
}, 300_000);

afterAll(() => env?.stop(), 60_000);

beforeEach(() => env.sandbox.reset());
