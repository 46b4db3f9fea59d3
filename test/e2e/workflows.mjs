// The example workflows in a real n8n with this package installed as a community package: the
// sync, CSV and campaign ones run by hand as the editor runs them, the sign-up form through real submissions to
// its published URL; and what n8n lists and serves for the node and its credential.
import fsp from 'node:fs/promises';
import path from 'node:path';

import { NEWSLETTER_LIST, readExamples, waitForForm } from '../../dev/n8n-setup.mjs';
import { latestExecutionId, nodeOutput, ran, submitForm, waitForExecution } from './executions.mjs';
import { env } from './shared.mjs';
import { exampleVariant, importWorkflow, NODE_TYPE, REPO_DIR, runByHand } from './helpers.mjs';

const SYNC = 'beExampleSync001';
const SIGNUP = 'beExampleSignup1';
const CAMPAIGN = 'beExampleCampgn1';
const CSV_SYNC = 'beExampleCsvSyn1';
const JANE = { firstName: 'Jane', email: 'jane@customer.test', company: 'Acme' };

const signupForm = `/form/${readExamples().find((e) => e.id === SIGNUP).formPath}`;

/** Submits a sign-up form like a browser and returns the execution it started. */
async function signUp(person = JANE, workflowId = SIGNUP, formPath = signupForm) {
	const before = await latestExecutionId(env.rest, workflowId);
	const values = [person.firstName, person.email, person.company];
	expect((await submitForm(`${env.n8n.url}${formPath}`, values)).status).toBe(200);
	return await waitForExecution(env.rest, workflowId, { afterId: before, n8nDir: env.n8nDir });
}

const requestsTo = (p) => env.sandbox.requests.filter((r) => r.path === p);
/** The example run by hand (`runByHand`): the json each node output. */
async function execute(workflowId) {
	const run = await runByHand(env, workflowId);
	expect(run.status).toBe('success');
	return (name, outputIndex = 0) => nodeOutput(run, name, outputIndex);
}
const newLists = () =>
	[...env.sandbox.state.lists.values()].filter((l) => l.listId !== NEWSLETTER_LIST.listId);

describe('n8n lists the package', () => {
	test("n8n serves each operation's output schema for this community package (/schemas/...)", async () => {
		const schemaDir = path.join(REPO_DIR, 'nodes/BasicsEngage/__schema__/v1.0.0');
		for (const resource of await fsp.readdir(schemaDir)) {
			for (const file of await fsp.readdir(path.join(schemaDir, resource))) {
				// The version as the editor asks for it (padded to 1.0.0): n8n 1.x looks up exactly
				// that folder, where 2.x would also find v1.0.0 from a bare 1.
				const url = `${env.n8n.url}/schemas/${NODE_TYPE}/1.0.0/${resource}/${file}`;
				const res = await fetch(url, { headers: { cookie: env.cookie } });
				expect([url, res.status]).toEqual([url, 200]);
				const shipped = JSON.parse(
					await fsp.readFile(path.join(schemaDir, resource, file), 'utf8'),
				);
				expect(await res.json()).toEqual(shipped);
			}
		}
	});

	test('/types/nodes.json has the node, its AI tool variant (2.x: and its human-review tool, Response Type fixed to Approval), the resources and operations; /types/credentials.json the credential', async () => {
		const cookie = { headers: { cookie: env.cookie } };
		// Both asked at once: parsing nodes.json blocked a loaded machine past n8n's keep-alive,
		// and the next request went out on the socket n8n had just closed ("other side closed").
		const [nodes, credentials] = await Promise.all(
			['nodes', 'credentials'].map(async (types) =>
				(await fetch(`${env.n8n.url}/types/${types}.json`, cookie)).json(),
			),
		);
		const byName = Object.fromEntries(nodes.map((n) => [n.name, n]));
		expect(byName[`${NODE_TYPE}Tool`]).toBeDefined();
		// n8n 2.x derives the human-review tool from the node (Custom Form stays out of it); 1.x has none
		const hitl = byName[`${NODE_TYPE}HitlTool`]?.properties.filter(
			(p) => p.name === 'responseType',
		);
		expect(hitl).toEqual(
			process.env.N8N_DEV_RUNTIME === 'v1'
				? undefined
				: [expect.objectContaining({ type: 'hidden', default: 'approval' })],
		);
		const node = byName[NODE_TYPE];
		expect(node.credentials).toEqual([
			expect.objectContaining({ name: 'basicsEngageApi', required: true }),
		]);
		const resource = node.properties.find((p) => p.name === 'resource');
		// (n8n itself appends "Custom API Call" to the resources of a declarative node)
		expect(resource.options.map((o) => o.name)).toEqual(
			expect.arrayContaining(['Campaign', 'Email', 'List']),
		);
		const operations = node.properties
			.filter((p) => p.name === 'operation')
			.flatMap((p) => p.options.map((o) => `${p.displayOptions.show.resource[0]}: ${o.name}`));
		expect(operations).toEqual(
			expect.arrayContaining([
				'email: Send',
				'list: Add Profiles to List',
				'list: Create',
				'campaign: Create',
				'campaign: Send',
			]),
		);

		const credential = credentials.find((c) => c.name === 'basicsEngageApi');
		// (n8n adds its own allowed-domains fields to every credential type)
		expect(credential.properties.map((p) => p.name)).toEqual(
			expect.arrayContaining(['apiKey', 'baseUrl']),
		);
	});
});

describe('the examples run by hand (Execute Workflow)', () => {
	test('scheduled contact sync: 5 contacts in batches of 2: 3 requests, one new list, summary adds up', async () => {
		const output = await execute(SYNC);
		const requests = requestsTo('/list/addProfiles');
		expect(requests.map((r) => r.body.profiles.length)).toEqual([2, 2, 1]);
		const [first, ...rest] = requests.map((r) => r.body);
		expect(first).toEqual({
			name: expect.stringMatching(/^CRM sync \d{4}-\d{2}-\d{2}$/),
			description: 'Contacts synced from the CRM by n8n',
			profiles: [
				{ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
				{ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
			],
		});
		const created = newLists();
		expect(created).toHaveLength(1);
		const { listId } = created[0];
		expect(rest.map((b) => b.listId)).toEqual([listId, listId]);
		expect(rest.every((b) => b.name === undefined)).toBe(true);
		expect(rest.flatMap((b) => b.profiles.map((p) => p.email))).toEqual([
			'alan@example.com',
			'katherine@example.com',
			'edsger@example.com',
		]);

		expect(output('Summary')).toEqual([{ listId, requests: 3, submittedCount: 5, addedCount: 5 }]);
	});

	test('CSV contacts export to a list: Download, Extract From File, Add Profiles mapping automatically: 4 rows in one request, the row without an email on the error output', async () => {
		// The example downloads from `npm run dev`'s sandbox on port 4010: a copy points at this one.
		const { workflow, node } = exampleVariant(CSV_SYNC, { id: 'beExampleCsvSyn2', label: 'here' });
		node('Download the contacts export').parameters.url =
			`${env.sandbox.baseUrl}/examples/contacts-export.csv`;
		await importWorkflow(env, workflow, { publish: false });
		const output = await execute(workflow.id);

		expect(requestsTo('/list/addProfiles').map((r) => r.body)).toEqual([
			{
				listId: NEWSLETTER_LIST.listId,
				profiles: [
					{ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
					{ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
					{ email: 'alan@example.com', firstName: 'Alan', lastName: 'Turing' },
					{ email: 'katherine@example.com', firstName: 'Katherine', lastName: 'Johnson' },
				],
			},
		]);
		expect(output('Added')).toEqual([
			{ listId: NEWSLETTER_LIST.listId, addedCount: 4, submittedCount: 4, listCreated: false },
		]);
		expect(output('Rows without an email')).toEqual([
			expect.objectContaining({ error: 'This item has no email field for Map Automatically' }),
		]);
	});

	test('new segment to sent campaign: one list holding the segment, one campaign naming that list, exactly one send to exactly those contacts', async () => {
		const output = await execute(CAMPAIGN);
		const SEGMENT = ['ada@example.com', 'grace@example.com', 'alan@example.com'];
		// One list for the whole segment (Create List runs once), with exactly its contacts.
		const lists = newLists();
		expect(lists).toHaveLength(1);
		const [list] = lists;
		expect(list.name).toMatch(/^Spring buyers \d{4}-\d{2}-\d{2}$/);
		expect([...list.profiles.values()].map((p) => p.email)).toEqual(SEGMENT);
		expect(requestsTo('/list/create').map((r) => r.body)).toEqual([
			{ listName: list.name, listDescription: 'Segment "Spring buyers", created by n8n' },
		]);
		// Its error output too, so a failure shows why the list is not on the success output.
		const created = [0, 1].map((outputIndex) =>
			output('Create a list for the segment', outputIndex),
		);
		expect(created).toEqual([[{ listId: list.listId }], []]);

		// One campaign, its recipients that list.
		const campaigns = [...env.sandbox.state.campaigns.values()];
		expect(campaigns).toHaveLength(1);
		const [campaign] = campaigns;
		expect(campaign).toMatchObject({
			name: 'Spring sale for Spring buyers',
			subject: 'Our spring sale starts today',
			recepientList: [list.listId],
		});
		expect(output('Create the campaign')).toEqual([
			{ campaignId: campaign._id, name: campaign.name, subject: campaign.subject },
		]);

		// Exactly one send, to exactly the segment.
		expect(env.sandbox.state.campaignSends).toEqual([
			expect.objectContaining({ campaignId: campaign._id, recipients: SEGMENT }),
		]);
		expect(output('Send the campaign')).toEqual([
			expect.objectContaining({ campaignId: campaign._id, sendingStarted: true }),
		]);
	});
});

describe('sign-up form (published, real form submissions)', () => {
	test('sends the welcome template with its variables, then adds the person to the list', async () => {
		const execution = await signUp();
		expect(execution.status).toBe('success');
		expect(ran(execution)).toEqual([
			'Add to newsletter list',
			'Send welcome email',
			'Sign-up form',
		]);

		expect(requestsTo('/email/send').map((r) => r.body)).toEqual([
			{
				to: 'jane@customer.test',
				from: 'hello@example.com',
				subject: 'Welcome to Acme, Jane!',
				templateId: 'tmpl_welcome',
				templateVariables: { firstName: 'Jane', company: 'Acme' },
			},
		]);
		expect(requestsTo('/list/addProfiles').map((r) => r.body)).toEqual([
			{
				listId: NEWSLETTER_LIST.listId,
				profiles: [{ email: 'jane@customer.test', firstName: 'Jane' }],
			},
		]);
		expect(nodeOutput(execution, 'Add to newsletter list')).toEqual([
			{ listId: NEWSLETTER_LIST.listId, addedCount: 1, submittedCount: 1, listCreated: false },
		]);
	});

	// [the failure, how the sandbox answers, the branch taken, its kind and status, its next step]
	test.each([
		[
			'daily quota used up (429)',
			() => env.sandbox.setOptions({ dailyLimit: 0 }),
			'Retry tomorrow',
			'quota_exceeded',
			429,
			/tomorrow/,
		],
		// the sandbox refuses the credential's key (until its reset)
		[
			'bad API key (401)',
			() => env.sandbox.setOptions({ apiKeys: ['be_another_key'] }),
			'Fix the API key',
			'invalid_api_key',
			401,
			/update the BasicsEngage credential/,
		],
		[
			'any other failure (500)',
			() => env.sandbox.injectFaults({ path: '/email/send', status: 500 }),
			'Handle other errors',
			'server_error',
			500,
			/^Failed \(server_error\): /,
		],
	])(
		'%s: the error output takes its own branch, with the form fields, the kind and nothing added',
		async (_, fail, branch, kind, httpCode, nextStep) => {
			fail();
			const execution = await signUp();
			expect(execution.status).toBe('success');
			expect(ran(execution)).toEqual(
				[branch, 'Send welcome email', 'Sign-up form', 'Why did it fail?'].sort(),
			);
			expect(nodeOutput(execution, 'Send welcome email', 0)).toEqual([]);
			expect(nodeOutput(execution, 'Send welcome email', 1)).toHaveLength(1);
			expect(nodeOutput(execution, branch)).toEqual([
				expect.objectContaining({
					// the form's own fields (keyed by label) travel with the error
					Email: 'jane@customer.test',
					'First name': 'Jane',
					details: expect.objectContaining({ kind, httpCode }),
					nextStep: expect.stringMatching(nextStep),
				}),
			]);
			// one send: a 5xx is not retried by default (the email may have been queued)
			expect(requestsTo('/email/send')).toHaveLength(1);
			expect(requestsTo('/list/addProfiles')).toHaveLength(0);
		},
	);
});

describe("Skip Emails Already Sent (n8n's deduplication store, in its database)", () => {
	const triggerPath = 'basicsengage-signup-skipping';
	const variant = {
		id: 'beExampleSignupD',
		label: 'Skip Emails Already Sent',
		triggerPath,
		tag: 'd0d0',
	};
	const { workflow, node } = exampleVariant(SIGNUP, variant);
	const submit = (person) => signUp(person, workflow.id, `/form/${triggerPath}`);

	/** The sign-up example with the option on, as its own published workflow and form. */
	beforeAll(async () => {
		node('Send welcome email').parameters.options = { skipAlreadySent: { settings: {} } };
		await importWorkflow(env, workflow);
		await waitForForm(`${env.n8n.url}/form/${triggerPath}`);
	}, 120_000);

	test('the same sign-up submitted twice, one after the other, sends one welcome email', async () => {
		const sam = { firstName: 'Sam', email: 'sam.skip@customer.test', company: 'Acme' };
		const first = await submit(sam);
		const second = await submit({ ...sam, email: 'SAM.Skip@customer.test' });
		const other = await submit({ ...sam, email: 'kim.skip@customer.test' });
		expect([first.status, second.status, other.status]).toEqual(['success', 'success', 'success']);
		expect(requestsTo('/email/send').map((r) => r.body.to)).toEqual([
			'sam.skip@customer.test',
			'kim.skip@customer.test',
		]);
		expect(nodeOutput(second, 'Send welcome email')).toEqual([
			{ skipped: true, reason: expect.stringMatching(/sent before/) },
		]);
	});

	test('an email refused with 429 is released: the next submission sends it', async () => {
		const lee = { firstName: 'Lee', email: 'lee.skip@customer.test', company: 'Acme' };
		env.sandbox.injectFaults([{ path: '/email/send', status: 429 }]);
		const refused = await submit(lee);
		expect(nodeOutput(refused, 'Send welcome email', 1)[0].details.kind).toBe('quota_exceeded');
		const sent = await submit(lee);
		expect(nodeOutput(sent, 'Send welcome email')[0].messageId).toEqual(expect.any(String));
		expect(env.sandbox.state.emails.map((email) => email.to)).toEqual(['lee.skip@customer.test']);
	});
});
