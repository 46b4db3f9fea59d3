#!/usr/bin/env node
// @ts-check
'use strict';

// `npm run sandbox`: the sandbox until Ctrl+C, logging one line per request (method, path, status,
// what it changed that the answer does not show), never a header value.

const { parseArgs } = require('node:util');
const { ZodError } = require('zod');
const { startSandbox, DEMO_API_KEY, LIST_AUTH_HEADERS, CAMPAIGN_LIST_FIELDS } = require('./server');

const USAGE = `Usage: node test/sandbox/cli.js [options]

  --port <n>                 port to listen on (default 4010; 0 = any free port)
  --host <address>           interface to bind (default 127.0.0.1)
  --key <key>                accepted API key; repeat for several (default ${DEMO_API_KEY})
  --daily-limit <n>          emails per key per UTC day (default 100)
  --list-auth-header <name>  ${LIST_AUTH_HEADERS.join(' | ')} (default Authroization, as published)
  --campaign-list-field <name>
                             ${CAMPAIGN_LIST_FIELDS.join(' | ')}: the list IDs field Create
                             Campaign reads (default recepientList, as published)
  --latency <ms>             delay before every answer (default 0)
  --any-sender               accept any "from" address instead of the verified senders
  -h, --help                 show this help`;

const LOCAL_HOSTS = ['127.0.0.1', '::1', '0.0.0.0', '::', 'localhost'];

/** @param {string | undefined} value @param {string} flag */
function toInteger(value, flag) {
	if (value !== undefined && !/^\d+$/.test(value)) {
		throw new Error(`${flag} expects a non-negative integer, got "${value}"`);
	}
	return value === undefined ? undefined : Number(value);
}

/** @param {string[]} args @returns {import('./server').SandboxOptions | undefined} */
function optionsFromArgs(args) {
	const { values } = parseArgs({
		args,
		options: {
			port: { type: 'string', default: '4010' },
			host: { type: 'string', default: '127.0.0.1' },
			key: { type: 'string', multiple: true },
			'daily-limit': { type: 'string' },
			'list-auth-header': { type: 'string' },
			'campaign-list-field': { type: 'string' },
			latency: { type: 'string' },
			'any-sender': { type: 'boolean' },
			help: { type: 'boolean', short: 'h' },
		},
	});
	if (values.help) return undefined;
	const options = {
		port: toInteger(values.port, '--port'),
		host: values.host,
		apiKeys: values.key,
		dailyLimit: toInteger(values['daily-limit'], '--daily-limit'),
		listAuthHeader: values['list-auth-header'],
		campaignListField: values['campaign-list-field'],
		latencyMs: toInteger(values.latency, '--latency'),
		verifiedSenders: values['any-sender'] ? null : undefined,
	};
	// Unset flags fall back to the sandbox defaults.
	return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

/** @param {import('./server').SandboxHandle} sandbox @param {boolean} customKeys */
function printBanner({ options, baseUrl, origin, port }, customKeys) {
	const local = LOCAL_HOSTS.includes(options.host);
	const lines = [
		'BasicsEngage sandbox running',
		`  Base URL:          ${local ? baseUrl.replace(origin, `http://localhost:${port}`) : baseUrl}`,
		// Keys given with --key may be real ones, so only the built-in demo key is shown.
		`  API key:           ${customKeys ? '(as given with --key, not shown)' : DEMO_API_KEY}`,
		`  List auth header:  ${options.listAuthHeader}`,
		`  Campaign lists:    read from ${options.campaignListField}`,
		`  Daily limit:       ${options.dailyLimit} emails per key per UTC day`,
		`  Verified senders:  ${options.verifiedSenders?.join(', ') ?? 'any'}`,
		'  Templates:',
		...Object.entries(options.templates).map(
			([id, variables]) => `    ${id} (variables: ${variables.join(', ') || 'none'})`,
		),
		'Press Ctrl+C to stop.',
	];
	console.log(lines.join('\n'));
}

/** @param {import('./server').ResponseLogEntry} entry */
function logResponse({ method, path, status, durationMs, summary }) {
	const line = `${new Date().toISOString()} ${method} ${path} ${status} ${durationMs}ms`;
	console.log(summary === undefined ? line : `${line} ${summary}`);
}

async function main() {
	let options;
	try {
		options = optionsFromArgs(process.argv.slice(2));
	} catch (error) {
		console.error(`${error instanceof Error ? error.message : error}\n\n${USAGE}`);
		process.exitCode = 2;
		return;
	}
	if (!options) return console.log(USAGE);

	const sandbox = await startSandbox({ ...options, onResponse: logResponse });
	/** @param {NodeJS.Signals} signal */
	const stop = (signal) => {
		console.log(`\n${signal} received, stopping sandbox.`);
		sandbox.close().then(() => process.exit(0));
	};
	// Before the banner: whoever waits for "Press Ctrl+C" may signal as soon as it is written.
	process.once('SIGINT', stop);
	process.once('SIGTERM', stop);
	printBanner(sandbox, options.apiKeys !== undefined);
}

main().catch((error) => {
	// zod names the offending options
	const lines =
		error instanceof ZodError
			? error.issues.map(({ path, message }) => `Invalid option ${path.join('.')}: ${message}`)
			: [error instanceof Error ? error.message : String(error)];
	console.error(lines.join('\n'));
	process.exit(1);
});
