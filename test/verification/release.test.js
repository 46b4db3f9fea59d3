// @ts-check
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = path.resolve(__dirname, '../..');

test('publish workflow: valid YAML, runs on version tags, publishes with npm provenance', () => {
	const workflow = YAML.parse(
		fs.readFileSync(path.join(root, '.github/workflows/publish.yml'), 'utf8'),
	);
	expect(workflow.on.push.tags).toEqual(['*.*.*']);
	const job = workflow.jobs.publish;
	expect(job.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
	const commands = job.steps.map((/** @type {{ run?: string }} */ step) => step.run ?? '');
	expect(commands).toContain('npm ci');
	expect(commands).toContain('npm test');
	expect(commands.some((/** @type {string} */ run) => /npm publish --provenance\b/.test(run))).toBe(
		true,
	);
});

test('CHANGELOG.md has an entry for the current version', () => {
	const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
	const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
	expect(changelog).toContain(`## [${version}]`);
});
