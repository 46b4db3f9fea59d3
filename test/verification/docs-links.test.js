// @ts-check
'use strict';

/**
 * Every relative link in the repository's Markdown resolves: `[..](path)` to a file or folder,
 * `[..](path.md#anchor)` and `[..](#anchor)` to a heading, by GitHub's anchor rule. Web and mail
 * links are not checked.
 */

const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** @returns {string[]} the Markdown files, but in dependencies, builds and dot-folders */
function markdownFiles(dir = root) {
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		if (entry.name.startsWith('.') || ['node_modules', 'dist'].includes(entry.name)) return [];
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) return markdownFiles(full);
		return entry.name.endsWith('.md') ? [path.relative(root, full)] : [];
	});
}

/** The text outside code: fenced blocks and `inline code` hold no links or headings. */
function prose(/** @type {string} */ file) {
	return fs
		.readFileSync(path.join(root, file), 'utf8')
		.replace(/^ *```[\s\S]*?^ *```/gm, '')
		.replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped but - and _, spaces to -. */
function slug(/** @type {string} */ heading) {
	return heading
		.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
		.replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated heading gets -1, -2, ... */
function anchors(/** @type {string} */ file) {
	const seen = new Map();
	return [...prose(file).matchAll(/^#{1,6} +(.+?) *#* *$/gm)].map(([, heading]) => {
		const base = slug(heading);
		const count = seen.get(base) ?? 0;
		seen.set(base, count + 1);
		return count ? `${base}-${count}` : base;
	});
}

/** What is wrong with each relative link of a file (none when all resolve). */
function brokenLinks(/** @type {string} */ file) {
	const links = [...prose(file).matchAll(/\]\(<?([^)\s>]+)>?(?: "[^"]*")?\)/g)].map((m) => m[1]);
	return links
		.filter((link) => !/^(https?:|mailto:)/.test(link))
		.flatMap((link) => {
			const [target, anchor] = link.split('#');
			const targetFile = target ? path.join(path.dirname(file), decodeURI(target)) : file;
			if (!fs.existsSync(path.join(root, targetFile))) return [`${link}: no file ${targetFile}`];
			if (anchor === undefined || !targetFile.endsWith('.md')) return [];
			return anchors(targetFile).includes(anchor)
				? []
				: [`${link}: no heading #${anchor} in ${targetFile}`];
		});
}

const files = markdownFiles();

test('README.md and docs/ are among the files checked', () => {
	expect(files).toEqual(expect.arrayContaining(['README.md', path.join('docs', 'development.md')]));
});

test.each(files)('%s: every relative link and anchor resolves', (/** @type {string} */ file) => {
	expect(brokenLinks(file)).toEqual([]);
});
