#!/usr/bin/env node
// First step of `npm run test:queue`: test/e2e/prepare.mjs --queue (the build, Debian's
// redis-server and postgresql, n8n 2.x).
process.argv.push('--queue');
await import('../e2e/prepare.mjs');
