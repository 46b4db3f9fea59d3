const fs = require('node:fs');
const { src, dest, series, parallel } = require('gulp');

async function clean() {
	await fs.promises.rm('dist', { recursive: true, force: true });
}

// TypeScript compiles nodes/ and credentials/ to dist/; n8n also needs the icons beside them.
function copyIcons() {
	return src(['nodes/**/*.{png,svg}', 'credentials/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

// The codex (*.node.json) gives n8n the node's categories, aliases and documentation links.
function copyCodex() {
	return src('nodes/**/*.node.json', { base: '.' }).pipe(dest('dist'));
}

// Output schemas (__schema__/v<version>/<resource>/<operation>.json): n8n serves them to the
// editor, which shows an operation's output fields before its first run.
function copySchemas() {
	return src('nodes/**/__schema__/**/*.json', { base: '.' }).pipe(dest('dist'));
}

exports.clean = clean;
exports['build:icons'] = parallel(copyIcons, copyCodex, copySchemas);
