// The n8n editor in Chromium (playwright-core): a new user sets up the owner account, finds the
// node, runs two examples from the editor and opens the parameter panel of both operations, which
// must show the node's resources, operations and parameters. Saves the screenshots docs show.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { login } from '../../dev/start-n8n.mjs';
import { launchBrowser, log, SCREENSHOT_DIR, startTestEnvironment } from './helpers.mjs';

const OWNER = {
	email: 'owner@example.com',
	firstName: 'Olga',
	lastName: 'Owner',
	password: 'Ownerpassw0rd!',
};

let env;
let browser;
let page;

beforeAll(async () => {
	// no owner: the editor's setup form asks for one, as on a fresh install
	env = await startTestEnvironment({ owner: null });
	browser = await launchBrowser();
	page = browser.context.pages()[0] ?? (await browser.context.newPage());
	page.setDefaultTimeout(30_000);
	await fsp.mkdir(SCREENSHOT_DIR, { recursive: true });
}, 300_000);

afterAll(async () => {
	await browser?.close();
	await env?.stop();
}, 60_000);

beforeEach(() => env.sandbox.reset());

/** Closes n8n's toasts ("Workflow executed successfully") and removes focus rings. */
async function tidy() {
	const close = page.locator('.el-notification__closeBtn:visible');
	for (let i = 0; i < 5 && (await close.count()) > 0; i++)
		await close
			.first()
			.click({ timeout: 1_000 })
			.catch(() => {});
	await page.evaluate(() => document.activeElement?.blur());
	await page.mouse.move(0, 0);
	await page.waitForTimeout(600); // toasts and dropdowns fade out
}

async function screenshot(name, target = page) {
	if (target === page) await tidy();
	const file = path.join(SCREENSHOT_DIR, name);
	await target.screenshot({ path: file });
	log(`screenshot ${path.relative(process.cwd(), file)}`);
}

/** A test that saves a screenshot of the page when it fails (path in the log). */
function uiTest(name, fn) {
	test(name, async () => {
		try {
			await fn();
		} catch (error) {
			const file = path.join(
				os.tmpdir(),
				`basicsengage-e2e-failure-${name.replace(/\W+/g, '-').slice(0, 60)}.png`,
			);
			await page?.screenshot({ path: file }).catch(() => {});
			log(`failed: screenshot of the page at ${file}`);
			throw error;
		}
	});
}

const canvasNode = (name) => page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
const succeeded = (name) => canvasNode(name).locator('[data-test-id="canvas-node-status-success"]');

async function openWorkflow(id) {
	await page.goto(`${env.n8n.url}/workflow/${id}`);
	await canvasNode('Sign-up form').or(canvasNode('Summary')).first().waitFor();
	await page.waitForTimeout(500); // let the canvas settle (fit to view)
}

/** Opens a node's parameter panel (NDV) and returns the values and labels it shows. */
async function openNodePanel(nodeName) {
	await canvasNode(nodeName).dblclick();
	const params = page.locator('[data-test-id="node-parameters"]');
	await params.waitFor();
	await page.waitForTimeout(500);
	const value = async (name) =>
		await params.locator(`[data-test-id="parameter-input-${name}"] input`).first().inputValue();
	// an input-label block holds the label, then the field: keep the label's line
	const labels = (await params.locator('[data-test-id="input-label"]').allInnerTexts()).map((t) =>
		t.trim().split('\n')[0].trim(),
	);
	return { params, value, labels };
}

/** The options a dropdown parameter offers (opens and closes it). */
async function dropdownOptions(params, name) {
	await params.locator(`[data-test-id="parameter-input-${name}"] input`).first().click();
	const items = page.locator('.el-select-dropdown__item:visible');
	await items.first().waitFor();
	const texts = (await items.allInnerTexts()).map((t) => t.trim().split('\n')[0]);
	await page.keyboard.press('Escape');
	// it fades out: wait until it is gone, so the next dropdown's items are not mixed in
	await items.first().waitFor({ state: 'detached' });
	await page.evaluate(() => document.activeElement?.blur());
	return texts;
}

/** A screenshot of the open panel (taller than the canvas needs: all of it shows), then closes it. */
async function shootAndClosePanel(name) {
	await page.setViewportSize({ width: 1440, height: 1240 });
	await screenshot(name);
	await page.setViewportSize({ width: 1440, height: 900 });
	await page.locator('[data-test-id="ndv-close-button"]').first().click();
	await page.locator('[data-test-id="node-parameters"]').waitFor({ state: 'detached' });
}

/** Runs the sign-up workflow from the editor: its test form opens in a new tab, filled and sent. */
async function runSignupFromEditor({ shot } = {}) {
	const [form] = await Promise.all([
		browser.context.waitForEvent('page'),
		page.locator('[data-test-id="execute-workflow-button"]').click(),
	]);
	await form.waitForLoadState();
	await form.setViewportSize({ width: 1000, height: 640 });
	await form.locator('#field-0').fill('Jane');
	await form.locator('#field-1').fill('jane@customer.test');
	await form.locator('#field-2').fill('Acme');
	if (shot) await screenshot(shot, form);
	await form.locator('button[type="submit"]').click();
	await form
		.getByText(/submitted|Thanks/i)
		.first()
		.waitFor()
		.catch(() => {});
	await form.close();
	await page.bringToFront();
}

uiTest('a new user creates the owner account on the setup form', async () => {
	await page.goto(`${env.n8n.url}/`);
	await page.waitForURL(/\/setup/);
	for (const [name, value] of Object.entries(OWNER)) {
		await page.locator(`input[name="${name}"]`).fill(value);
	}
	await page.locator('[data-test-id="form-submit-button"]').click();
	await page.waitForURL((url) => !url.pathname.startsWith('/setup'));
	// the account works outside the browser too
	await expect(login(env.n8n.url, OWNER)).resolves.toEqual({
		cookie: expect.stringContaining('n8n-auth='),
	});
});

uiTest('the node creator lists BasicsEngage with its actions', async () => {
	await openWorkflow('beExampleSync001');
	await page.locator('[data-test-id="node-creator-plus-button"]').click();
	// into the search box once it is there: typed at once, the keys went nowhere on a busy machine
	await page.getByPlaceholder('Search nodes...').fill('BasicsEngage');
	// the only text that is exactly the node's name: its entry in the search results
	await page.getByText('BasicsEngage', { exact: true }).first().waitFor();
	await page
		.getByText(
			'Send transactional emails, manage contact lists and send campaigns with BasicsEngage',
		)
		.waitFor();
	await page.keyboard.press('Enter');
	await page.getByText('Add profiles to a list').waitFor();
	for (const action of [
		'Send an email',
		'Create a list',
		'Create a campaign',
		'Send a campaign to every profile of its lists',
	]) {
		await expect(page.getByText(action, { exact: true }).isVisible()).resolves.toBe(true);
	}
	await screenshot('node-creator.png');
	await page.keyboard.press('Escape');
	await page.keyboard.press('Escape');
});

uiTest(
	'sign-up example: run from the editor with its test form; the Send Email panel shows its parameters',
	async () => {
		await openWorkflow('beExampleSignup1');
		await runSignupFromEditor({ shot: 'signup-form.png' });
		await succeeded('Add to newsletter list').waitFor();
		expect(env.sandbox.requests.map((r) => `${r.path} ${r.headers.authorization}`)).toEqual([
			'/email/send Bearer be_sandbox_demo_key',
			'/list/addProfiles Bearer be_sandbox_demo_key',
		]);

		const { params, value, labels } = await openNodePanel('Send welcome email');
		expect(await value('resource')).toBe('Email');
		expect(await value('operation')).toBe('Send');
		expect(await value('content')).toBe('Template');
		expect(await value('templateVariablesMode')).toBe('Using Fields Below');
		expect(labels).toEqual(
			expect.arrayContaining([
				'To',
				'From',
				'Subject',
				'Content',
				'Template ID',
				'Template Variables',
				'Variables',
				'Name',
				'Value',
			]),
		);
		expect(await dropdownOptions(params, 'resource')).toEqual(
			expect.arrayContaining(['Email', 'List']),
		);
		await shootAndClosePanel('node-send-email.png');

		// quota used up: the error output and the "Quota exceeded" branch light up
		env.sandbox.setOptions({ dailyLimit: 0 });
		await runSignupFromEditor();
		await succeeded('Retry tomorrow').waitFor();
		for (const other of ['Add to newsletter list', 'Fix the API key']) {
			expect(await succeeded(other).count()).toBe(0);
		}
		await screenshot('workflow-signup-quota.png');
	},
);

uiTest(
	'contact sync example: run from the editor; the Add Profiles panel shows its parameters',
	async () => {
		await openWorkflow('beExampleSync001');
		await page.locator('[data-test-id="execute-workflow-button"]').click();
		await succeeded('Summary').waitFor();
		expect(env.sandbox.requests.map((r) => r.body.profiles.length)).toEqual([2, 2, 1]);
		await screenshot('workflow-contact-sync.png');

		const { params, value, labels } = await openNodePanel('Add to a new list');
		expect(await value('resource')).toBe('List');
		expect(await value('operation')).toBe('Add Profiles to List');
		expect(await value('listMode')).toBe('Create New List');
		expect(labels).toEqual(
			expect.arrayContaining([
				'List',
				'List Name',
				'List Description',
				'Email',
				'Additional Fields',
				'First Name',
				'Last Name',
				'Options',
				'Batch Size',
			]),
		);
		expect(await dropdownOptions(params, 'operation')).toEqual(
			expect.arrayContaining(['Add Profiles to List']),
		);
		expect(await dropdownOptions(params, 'listMode')).toEqual(['Create New List', 'Existing List']);
		// the output pane: one item per request, all into the one new list
		await page.getByText('3 items', { exact: true }).first().waitFor();
		await shootAndClosePanel('node-add-profiles.png');
	},
);
