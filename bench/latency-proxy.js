// @ts-check
'use strict';

/**
 * The `wan` part of `npm run bench`: the sandbox as a client sees a server across a real network,
 * over TLS with a round trip of `rttMs`. A TCP proxy holds every chunk for half the round trip
 * in each direction, so the TCP and TLS handshakes pay it too, in front of a TLS terminator
 * (a throwaway self-signed certificate) that forwards to the sandbox in plain HTTP.
 */

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');

/** A self-signed certificate for 127.0.0.1, made with openssl for this run only. */
function selfSigned() {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-tls-'));
	const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
	execFileSync(
		'openssl',
		[
			'req',
			'-x509',
			'-newkey',
			'ec',
			'-pkeyopt',
			'ec_paramgen_curve:prime256v1',
			'-nodes',
			'-keyout',
			key,
			'-out',
			cert,
			'-days',
			'1',
			'-subj',
			'/CN=127.0.0.1',
		],
		{ stdio: 'ignore' },
	);
	const pair = { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
	fs.rmSync(dir, { recursive: true, force: true });
	return pair;
}

/**
 * Forwards `from` to `to`, each chunk `delayMs` later, in order (timers of one delay fire in
 * the order they were set).
 * @param {net.Socket} from @param {net.Socket} to @param {number} delayMs
 */
function delayed(from, to, delayMs) {
	from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
	from.on('end', () => setTimeout(() => to.end(), delayMs));
	from.on('error', () => to.destroy());
	from.on('close', () => setTimeout(() => to.destroy(), delayMs + 1));
}

/** @param {net.Server} server @returns {Promise<number>} */
const listen = (server) =>
	new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve(/** @type {net.AddressInfo} */ (server.address()).port),
		),
	);

/**
 * @param {string} sandboxBaseUrl e.g. http://127.0.0.1:4010/api/v0/dev
 * @param {number} rttMs
 * @returns {Promise<{ baseUrl: string, close: () => void }>} the sandbox's base URL behind the proxy
 */
async function startLatencyProxy(sandboxBaseUrl, rttMs) {
	const target = new URL(sandboxBaseUrl);
	const terminator = tls.createServer(selfSigned(), (clear) => {
		const upstream = net.connect(Number(target.port), target.hostname);
		clear.pipe(upstream).pipe(clear);
		clear.on('error', () => upstream.destroy());
		upstream.on('error', () => clear.destroy());
	});
	const tlsPort = await listen(terminator);
	const proxy = net.createServer((client) => {
		const server = net.connect(tlsPort, '127.0.0.1');
		delayed(client, server, rttMs / 2);
		delayed(server, client, rttMs / 2);
	});
	const port = await listen(proxy);
	return {
		baseUrl: `https://127.0.0.1:${port}${target.pathname}`,
		close: () => {
			proxy.close();
			terminator.close();
		},
	};
}

module.exports = { startLatencyProxy };
