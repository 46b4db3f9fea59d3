// @ts-check
'use strict';

// After each file, stop what n8n's engine started in it, as the CLI does on shutdown.
afterAll(() => /** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')]?.());
