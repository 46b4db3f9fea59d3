// @ts-check
'use strict';

/**
 * Runs a community package in n8n-core's real engine (WorkflowExecute, RoutingNode, the HTTP
 * stack) as a server does; what the CLI keeps in its database (credentials, the deduplication
 * store, logs) is in memory.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const { coreRequire, coreInternal, engine } = require('./resolve');

const core = coreRequire('n8n-core');
/** @type {typeof import('n8n-workflow')} */
const workflowLib = coreRequire('n8n-workflow');
const { Container } = coreRequire('@n8n/di');
const { Logger } = coreRequire('@n8n/backend-common');
const { get, pick } = coreRequire('lodash');
// 2.x sends requests through @n8n/backend-network's OutboundHttp (a DI service); 1.x uses axios.
const { OutboundHttp } = engine.major === 2 ? coreRequire('@n8n/backend-network') : {};

const { Workflow, NodeHelpers, NodeConnectionTypes, UserError } = workflowLib;

/**
 * @import { INodeExecutionData, INodeType, IVersionedNodeType, ICredentialType, INode, INodeTypes,
 *   IRun, INodeParameters, IConnections, WorkflowExecuteMode, INodeCredentialTestResult,
 *   ICredentialDataDecryptedObject, ExecutionError, NodeApiError } from 'n8n-workflow'
 * @typedef {ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject)} StoredData
 * @typedef {ExecutionError & Partial<Pick<NodeApiError, 'failure' | 'httpCode'>>} RunError  a node's error adds these
 * @typedef {Record<string, { id: string, name: string, type: string, data: StoredData }>} CredentialStore
 */

/** @type {string[]} */
const logLines = [];

// Stands in for the winston backend of n8n's Logger: one line per entry, message AND metadata,
// so a test can assert a secret appears nowhere n8n would write it.
function createCaptureBackend(/** @type {string[]} */ scopes = []) {
	return {
		levels: { error: 0, warn: 1, info: 2, debug: 3 },
		log(/** @type {string} */ level, /** @type {string} */ message, /** @type {object} */ meta) {
			const scope = scopes.length ? ` [${scopes.join(',')}]` : '';
			const metadata = workflowLib.jsonStringify(meta, { replaceCircularRefs: true });
			logLines.push(`${level}${scope}: ${message} ${metadata}`);
		},
		child: (/** @type {{ scopes: string[] }} */ options) =>
			createCaptureBackend([...scopes, ...options.scopes]),
	};
}

/** All log lines captured so far (in this jest module registry). */
const getLogs = () => [...logLines];
const clearLogs = () => void (logLines.length = 0);

let servicesStarted = false;

// The DI services n8n-core reads, once per module registry (per jest test file).
function ensureServices() {
	if (servicesStarted) return;
	servicesStarted = true;
	// InstanceSettings writes its `config` (always the same key) there, not in ~/.n8n.
	const tmpDir = path.join(os.tmpdir(), 'n8n-test-harness');
	fs.mkdirSync(tmpDir, { recursive: true });
	// The real Logger, configured by plain objects: it reads no N8N_LOG_* and writes no file.
	const logger = new Logger(
		/** @type {any} */ ({ logging: { level: 'debug', outputs: [], scopes: [] } }),
		/** @type {any} */ ({ n8nFolder: tmpDir }),
	);
	logger.setInternalLogger(createCaptureBackend());
	Container.set(Logger, logger);
	workflowLib.LoggerProxy.init(logger);
	const instanceSettings = new core.InstanceSettings(
		/** @type {any} */ ({
			n8nFolder: tmpDir,
			userHome: tmpDir,
			encryptionKey: 'n8n-harness-encryption-key',
			enforceSettingsFilePermissions: false,
		}),
		logger,
	);
	Container.set(core.InstanceSettings, instanceSettings);
	// The real outbound HTTP client (2.x, SSRF protection off as on a stock n8n) and ErrorReporter.
	if (OutboundHttp) Container.get(OutboundHttp);
	Container.get(core.ErrorReporter);
	void core.DataDeduplicationService.init(createMemoryDeduplicator());
}

// On a real server a call to the deduplication store can fail (SQLite "SQLITE_BUSY: database is
// locked"), writing nothing: failCalls(1, 3) fails the 1st and 3rd calls from now, any method.
const deduplicationStore = {
	calls: 0,
	/** @type {Set<number>} */
	failing: new Set(),
	/** @param {...number} nth */
	failCalls(...nth) {
		this.failing = new Set(nth.map((n) => this.calls + n));
	},
	/**
	 * What a call waits for before it reads its row, and before it writes it (none: the read at
	 * once, the write the next tick), by the values it records or removes: a test orders two
	 * workers' reads and writes.
	 * @type {(items: string[], before: 'read' | 'write') => Promise<unknown> | undefined}
	 */
	roundTrip: () => undefined,
	/** @param {{ workflow: object }} context */
	beforeCall(context) {
		this.calls++;
		if (this.failing.delete(this.calls)) throw new Error('SQLITE_BUSY: database is locked');
		assertAlive(context);
	},
};

// Executions whose n8n "died" (`diesWhen`): their store calls write nothing from then on.
/** @type {WeakSet<object>} */
const deadWorkflows = new WeakSet();

/** @param {{ workflow: object }} context */
function assertAlive(context) {
	if (deadWorkflows.has(context.workflow)) throw new Error('n8n died');
}

// The CLI's deduplicator in "entries" mode, for the two calls the node makes: per workflow and
// scope ('node': per node id) one row of the `maxEntries` newest values. Each call reads and
// rewrites the row, so overlapping calls lose writes, as on the server.
function createMemoryDeduplicator() {
	/** @type {Map<string, string[]>} */
	const store = new Map();
	/** @param {string} scope @param {any} context @param {string[]} items */
	async function readRow(scope, context, items) {
		deduplicationStore.beforeCall(context);
		const key = `${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
		const wait = (/** @type {'read' | 'write'} */ before) =>
			deduplicationStore.roundTrip(items.map(String), before) ??
			(before === 'write' && new Promise(setImmediate));
		await wait('read');
		const recorded = [...(store.get(key) ?? [])];
		// The database round trip.
		await wait('write');
		assertAlive(context);
		return { recorded, save: () => store.set(key, recorded) };
	}
	return {
		/** @param {string[]} items @param {string} scope @param {any} context @param {{ maxEntries: number }} options */
		async checkProcessedAndRecord(items, scope, context, options) {
			const { recorded, save } = await readRow(scope, context, items);
			const known = new Set(recorded);
			/** @type {{ new: string[], processed: string[] }} */
			const result = { new: [], processed: [] };
			for (const item of items) {
				// A value repeated in one call is new (and recorded) each time, as on the server.
				const isNew = !known.has(String(item));
				result[isNew ? 'new' : 'processed'].push(item);
				if (isNew) recorded.push(String(item));
			}
			recorded.splice(0, Math.max(0, recorded.length - options.maxEntries));
			save();
			return result;
		},
		/** @param {string[]} items @param {string} scope @param {any} context */
		async removeProcessed(items, scope, context) {
			const { recorded, save } = await readRow(scope, context, items);
			for (const item of items) {
				const index = recorded.indexOf(String(item));
				if (index !== -1) recorded.splice(index, 1);
			}
			save();
		},
	};
}

// 1.x's SSHClientsManager starts a ref'd 60 s interval only onShutdown() clears: jest-setup.js
// calls this after each file, else jest never exits.
function shutdown() {
	const { SSHClientsManager } = coreInternal('dist/execution-engine/ssh-clients-manager');
	if (Container.has(SSHClientsManager)) Container.get(SSHClientsManager).onShutdown();
}
/** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')] = shutdown;

/**
 * Nodes by `<package>.<name>` (the latest version's description), credentials by type name.
 * @typedef {{ name: string, type: INodeType | IVersionedNodeType,
 *   description: import('n8n-workflow').INodeTypeDescription }} LoadedNode
 * @typedef {{ name: string, type: ICredentialType, supportedNodes: string[] }} LoadedCredential
 * @typedef {{ packageName: string, nodes: Record<string, LoadedNode>,
 *   credentials: Record<string, LoadedCredential> }} LoadedPackage
 */

/** @type {Map<string, LoadedPackage>} by the package directory's realpath */
const packagesByDir = new Map();
/** @type {Map<string, LoadedNode>} */
const nodeRegistry = new Map();
/** @type {Map<string, LoadedCredential>} */
const credentialRegistry = new Map();

/** @param {INodeType | IVersionedNodeType} type */
const latestDescription = (type) => NodeHelpers.getVersionedNodeType(type).description;

// Loads a built package as the server does, by n8n-core's PackageDirectoryLoader (which adds
// declarative "Request Options", fixes icon paths, validates descriptions). Cached per directory.
// `register: false` keeps the registry's types: a second queue-mode worker, run by `loaded`.
/** @param {string} packageDir @param {{ register?: boolean }} [options] @returns {Promise<LoadedPackage>} */
async function loadPackage(packageDir, { register = true } = {}) {
	ensureServices();
	const directory = fs.realpathSync(packageDir);
	const cached = packagesByDir.get(directory);
	if (cached) return cached;
	const loader = new core.PackageDirectoryLoader(directory);
	await loader.loadAll();
	const { packageName } = loader;
	/** @type {LoadedPackage} */
	const loaded = { packageName, nodes: {}, credentials: {} };
	for (const [shortName, { type }] of Object.entries(loader.nodeTypes)) {
		const name = `${packageName}.${shortName}`;
		loaded.nodes[name] = { name, type, description: latestDescription(type) };
		if (register) nodeRegistry.set(name, loaded.nodes[name]);
	}
	for (const [name, { type }] of Object.entries(loader.credentialTypes)) {
		const supportedNodes = loader.known.credentials[name].supportedNodes.map(
			(/** @type {string} */ node) => `${packageName}.${node}`,
		);
		loaded.credentials[name] = { name, type, supportedNodes };
		if (register) credentialRegistry.set(name, loaded.credentials[name]);
	}
	packagesByDir.set(directory, loaded);
	return loaded;
}

/** @param {string} name @returns {ICredentialType} */
const credentialType = (name) =>
	/** @type {LoadedCredential} */ (credentialRegistry.get(name)).type;

// As CredentialsHelper.applyDefaultsAndOverwrites: the stored data (a function: read at each try)
// with defaults, unknown keys dropped. No test writes an expression in it.
/** @param {string} type @param {StoredData} stored */
function credentialData(type, stored) {
	const data = structuredClone(typeof stored === 'function' ? stored() : stored);
	const { properties } = credentialType(type);
	return /** @type {ICredentialDataDecryptedObject} */ (
		NodeHelpers.getNodeParameters(properties, /** @type {any} */ (data), true, false, null, null)
	);
}

// The CLI's CredentialsHelper, for what this package's credential needs: no OAuth, no
// preAuthentication (so n8n-core re-sends a thrown 401 once, as on the server).
/** @param {CredentialStore} store */
const createCredentialsHelper = (store) => ({
	getParentTypes: () => [],
	isCredentialUsableByNode: () => true,
	/** @param {any} _additionalData @param {{ id: string }} details @param {string} type */
	getDecrypted: async (_additionalData, details, type) =>
		credentialData(type, store[details.id].data),
	/** @param {ICredentialDataDecryptedObject} credentials @param {string} type @param {any} requestOptions */
	authenticate: async (credentials, type, requestOptions) =>
		await /** @type {Function} */ (credentialType(type).authenticate)(credentials, requestOptions),
	preAuthentication: async () => undefined,
});

/**
 * A node type of the harness.
 * @param {string} name @param {INodeType['execute']} execute
 * @param {import('n8n-workflow').INodeTypeDescription['inputs']} [inputs]
 * @returns {INodeType}
 */
const harnessNodeType = (name, execute, inputs = [NodeConnectionTypes.Main]) => ({
	description: {
		displayName: name,
		name,
		group: ['transform'],
		version: 1,
		description: name,
		defaults: { name },
		inputs,
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	},
	execute,
});
/** @param {string} name @param {string} type @param {[number, number]} [position] @returns {INode} */
const harnessNode = (name, type, position = [0, 0]) => ({
	id: randomUUID(),
	name,
	type,
	typeVersion: 1,
	position,
	parameters: {},
});

const SOURCE_TYPE = 'n8n-nodes-harness.source';
const SINK_TYPE = 'n8n-nodes-base.noOp';
const AGENT_TYPE = 'n8n-nodes-harness.agent';

// For a type no loaded package has (n8n-nodes-base is not installed); any but the Manual Trigger
// and No Operation must be pinned.
/** @param {string} typeName */
function standInNodeType(typeName) {
	const trigger = typeName === 'n8n-nodes-base.manualTrigger';
	return harnessNodeType(
		typeName,
		async function () {
			if (trigger) return [[{ json: {} }]];
			if (typeName === SINK_TYPE) return [this.getInputData()];
			throw new UserError(`The test harness cannot run "${typeName}": pin its output`);
		},
		trigger ? [] : undefined,
	);
}

/**
 * Stands in for an AI Agent or the MCP Server Trigger: its tools come from n8n-core
 * (getInputConnectionData wraps a `usableAsTool` node with createNodeAsTool); it calls the one
 * tool per entry, in order, or all at once (`parallel`: several tool calls in one model step).
 * One item per call: `{ answer }` or `{ thrown }` (an MCP client's `isError` result), with
 * `toolName` and `toolDescription` (what the model reads).
 * @param {Array<Record<string, unknown>>} calls @param {boolean} [parallel]
 */
const createAgentNodeType = (calls, parallel = false) =>
	harnessNodeType(
		'agent',
		async function () {
			const [tool] = /** @type {any[]} */ (
				await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0)
			);
			const about = { toolName: tool.name, toolDescription: tool.description };
			/** @param {Record<string, unknown>} args @returns {Promise<INodeExecutionData>} */
			const call = (args) =>
				tool.invoke(args).then(
					(/** @type {unknown} */ answer) => ({ json: { ...about, answer } }),
					(/** @type {any} */ error) => ({ json: { ...about, thrown: String(error?.message) } }),
				);
			if (parallel) return [await Promise.all(calls.map(call))];
			const answers = [];
			for (const args of calls) answers.push(await call(args));
			return [answers];
		},
		[NodeConnectionTypes.Main, { type: NodeConnectionTypes.AiTool, displayName: 'Tools' }],
	);

// The "<name>Tool" type the server derives from a `usableAsTool` node (the CLI's
// convertNodeToAiTool): the same class, with only an ai_tool output.
/** @param {INodeType | IVersionedNodeType} type @returns {INodeType} */
function toToolNodeType(type) {
	const description = structuredClone(latestDescription(type));
	description.name += 'Tool';
	description.displayName += ' Tool';
	description.inputs = [];
	description.outputs = [NodeConnectionTypes.AiTool];
	delete description.usableAsTool;
	return Object.assign(Object.create(type), { description });
}

/** The loaded packages plus `extra`. @param {Record<string, INodeType | IVersionedNodeType>} extra @returns {INodeTypes} */
function createNodeTypes(extra) {
	/** @param {string} name */
	const getByName = (name) =>
		extra[name] ?? /** @type {LoadedNode} */ (nodeRegistry.get(name)).type;
	return {
		getByName,
		getByNameAndVersion: (name, version) =>
			NodeHelpers.getVersionedNodeType(getByName(name), version),
		getKnownTypes: () => ({}),
	};
}

// What the CLI's WorkflowExecuteAdditionalData.getBase builds, as far as n8n-core reads it here.
/** @param {{ credentialsHelper: any, executionId?: string, workflowId?: string, hooks?: any }} data */
function createAdditionalData(data) {
	const base = 'http://localhost:5678/';
	return /** @type {any} */ ({
		...data,
		currentNodeExecutionIndex: 0,
		restApiUrl: `${base}rest`,
		instanceBaseUrl: base,
		formWaitingBaseUrl: `${base}form-waiting`,
		webhookBaseUrl: `${base}webhook`,
		webhookWaitingBaseUrl: `${base}webhook-waiting`,
		webhookTestBaseUrl: `${base}webhook-test`,
		variables: {},
		setExecutionStatus: () => {},
		logAiEvent: () => {},
	});
}

/**
 * Runs a workflow as a manual run does (ManualExecutionService: WorkflowExecute.run, an options
 * object on 2.x, positional on 1.x); hooks record the executed nodes in order. `stopWhen` does
 * what the Stop button does (cancel); `diesWhen` too, and the store calls write nothing more.
 * @param {{ workflow: import('n8n-workflow').Workflow, store: CredentialStore,
 *   startNode: INode | null, pinData?: any, stopWhen?: () => boolean, diesWhen?: () => boolean }} run
 */
async function executeWorkflow({ workflow, store, startNode, pinData, stopWhen, diesWhen }) {
	const mode = /** @type {const} */ ('manual');
	const executionId = `${Math.floor(Math.random() * 1e9)}`;
	/** @type {string[]} */
	const executedNodes = [];
	// Only the CLI's own hooks (saving the execution) read the workflow's data.
	const hooks = new core.ExecutionLifecycleHooks(mode, executionId, { id: workflow.id });
	hooks.addHandler('nodeExecuteAfter', (/** @type {string} */ node) => executedNodes.push(node));
	const credentialsHelper = createCredentialsHelper(store);
	const workflowId = workflow.id;
	const additionalData = createAdditionalData({
		credentialsHelper,
		executionId,
		workflowId,
		hooks,
	});
	const logStart = logLines.length;
	const workflowExecute = new core.WorkflowExecute(additionalData, mode);
	const start = startNode ?? undefined;
	const execution =
		engine.major === 1
			? workflowExecute.run(workflow, start, undefined, pinData)
			: workflowExecute.run({ workflow, startNode: start, pinData });
	const watch =
		(stopWhen || diesWhen) &&
		setInterval(() => {
			const dies = diesWhen?.() === true;
			if (!dies && !stopWhen?.()) return;
			if (dies) deadWorkflows.add(workflow);
			clearInterval(watch);
			execution.cancel();
		}, 2);
	try {
		const run = await execution;
		const logs = logLines.slice(logStart);
		return { run, executedNodes, logs, additionalData, executionId, mode };
	} finally {
		clearInterval(watch);
	}
}

/** A browser's User-Agent, for the requests a person makes by opening a link. */
const BROWSER_USER_AGENT =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

/**
 * A request to a resume URL (e.g. a link in an email), by default a GET with a browser's
 * User-Agent only; the answer's `body` is what the browser gets.
 * @typedef {{ url: string, method?: 'GET' | 'HEAD' | 'POST', headers?: Record<string, string>,
 *   body?: unknown }} WaitingWebhookRequest
 * @typedef {{ status: number, body: unknown, resumed: boolean }} WaitingWebhookAnswer
 */

/**
 * Goes on with an execution as the server does: a request to its resume URL (cli
 * waiting-webhooks.ts) passes the signature check, finds the node's restart webhook for the method
 * and calls its `webhook`; returned `workflowData` becomes the input of the node, now disabled.
 * Also the wait limit passing (WaitTracker) and Retry in the Executions list.
 * @param {{ run: IRun, workflow: import('n8n-workflow').Workflow, additionalData: any,
 *   mode: WorkflowExecuteMode, executionId: string }} waiting
 * @param {(run: IRun) => any} describe what the caller makes of a run
 */
function createResumer(waiting, describe) {
	let { run } = waiting;
	const { workflow, additionalData, mode, executionId } = waiting;
	const goOn = async () => {
		const logStart = logLines.length;
		const workflowExecute = new core.WorkflowExecute(additionalData, mode, run.data);
		run = await workflowExecute.processRunExecutionData(workflow);
		// What went on can be resumed or retried again, as in n8n (a Retry of a retried execution).
		return { ...describe(run), logs: logLines.slice(logStart), ...resumer };
	};
	const resumer = {
		/** @param {WaitingWebhookRequest} request @returns {Promise<WaitingWebhookAnswer & { result?: any }>} */
		async callWebhook({
			url,
			method = 'GET',
			headers = { 'user-agent': BROWSER_USER_AGENT },
			body,
		}) {
			const refuse = (/** @type {number} */ status, /** @type {unknown} */ answer) => ({
				status,
				body: answer,
				resumed: false,
			});
			const target = new URL(url);
			const [, nodeId] = target.pathname.split(`/webhook-waiting/${executionId}/`);
			if (!run.waitTill) return refuse(409, 'The execution is not waiting');
			const nodeName = /** @type {string} */ (run.data.resultData.lastNodeExecuted);
			const node = /** @type {INode} */ (workflow.getNode(nodeName));
			if (node.parameters.operation === 'sendAndWait' && !hasValidSignature(target)) {
				return refuse(401, { error: 'Invalid token' });
			}
			const nodeType = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			const webhookDescription = nodeType.description.webhooks?.find(
				(candidate) =>
					candidate.httpMethod === method &&
					candidate.restartWebhook === true &&
					workflow.expression.getSimpleParameterValue(node, candidate.path, mode, {}) === nodeId,
			);
			if (!webhookDescription) return refuse(404, 'No waiting webhook with this path and method');
			const httpRequest = {
				method,
				url: `${target.pathname}${target.search}`,
				query: Object.fromEntries(target.searchParams),
				headers,
				params: {},
				// As n8n hands it over: none for an empty post, `null` for JSON null, a string for text.
				body,
			};
			const context = new core.WebhookContext(
				workflow,
				node,
				{ ...additionalData, httpRequest },
				mode,
				{
					httpMethod: method,
					node: node.name,
					path: nodeId,
					webhookDescription,
					workflowId: workflow.id,
					isTest: false,
				},
				[],
				run.data,
			);
			const answer = await /** @type {Function} */ (nodeType.webhook).call(context);
			if (answer.workflowData === undefined) return refuse(200, answer.webhookResponse);
			run.data.waitTill = undefined;
			const [stackEntry] = run.data.executionData?.nodeExecutionStack ?? [];
			stackEntry.node.disabled = true;
			stackEntry.data.main = answer.workflowData;
			stackEntry.metadata = { ...stackEntry.metadata, forwardAllOutputs: true };
			run.data.resultData.runData[nodeName].pop();
			const result = await goOn();
			return { status: 200, body: answer.webhookResponse, resumed: true, result };
		},
		passWaitLimit: goOn,
		// ExecutionService.retry (both lines): the data as stored (the node context survives), its
		// error and the failed node's last run removed, run on from the stack that still holds it.
		async retryExecution() {
			run = { ...run, data: JSON.parse(JSON.stringify(run.data)) };
			const { resultData } = run.data;
			delete resultData.error;
			const nodeRuns = resultData.runData[/** @type {string} */ (resultData.lastNodeExecuted)];
			if (nodeRuns?.at(-1)?.error !== undefined) nodeRuns.pop();
			return await goOn();
		},
	};
	return resumer;
}

// n8n's check of a signed resume URL: its HMAC, without `signature`, under the instance's secret.
/** @param {URL} url */
function hasValidSignature(url) {
	const { generateUrlSignature, prepareUrlForSigning } = coreInternal(
		'dist/utils/signature-helpers',
	);
	const unsigned = new URL(url);
	const signature = unsigned.searchParams.get('signature');
	unsigned.searchParams.delete('signature');
	const { hmacSignatureSecret } = Container.get(core.InstanceSettings);
	return signature === generateUrlSignature(prepareUrlForSigning(unsigned), hmacSignatureSecret);
}

/**
 * @typedef {object} RunWorkflowOptions
 * @property {string} nodeType    full type name, `<package>.<node>`
 * @property {string} [packageDir] load this package first (cached)
 * @property {LoadedPackage} [loaded] run the node of this package (another worker's) instead
 * @property {INodeParameters} [parameters]
 * @property {Array<INodeExecutionData | Record<string, unknown>>} [items] default: one empty item
 * @property {Record<string, StoredData>} [credentials] by type; a function is read at each try
 * @property {'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput'} [onError]
 * @property {Array<Record<string, unknown>>} [toolCalls] run the node as an agent's tool, once per entry
 * @property {boolean} [parallelToolCalls] the agent makes the tool calls all at once
 * @property {string} [workflowId] give one to share the deduplication store between runs
 * @property {boolean} [retryOnFail]
 * @property {number} [maxTries]
 * @property {number} [waitBetweenTries]
 * @property {Partial<INode>} [nodeOverrides] merged into the tested node
 * @property {() => boolean} [stopWhen] polled every 2 ms; once true the execution is stopped as
 *   the Stop button does, and the run resolves when the tested node returns
 * @property {() => boolean} [diesWhen] likewise, but n8n "dies": its store calls write nothing more
 */

/**
 * Builds `Source -> Node Under Test -> Success Sink (+ Error Sink)`, or `Source -> Agent` with the
 * node as its tool, and runs it as a full manual run: `success` and `errors` are the node's main
 * outputs, `toolAnswers` the agent's, `executedNodes` in the order n8n finished them.
 * @param {RunWorkflowOptions} options
 */
async function runWorkflow(options) {
	ensureServices();
	if (options.packageDir) await loadPackage(options.packageDir);
	const tested = /** @type {LoadedNode} */ (
		options.loaded?.nodes[options.nodeType] ?? nodeRegistry.get(options.nodeType)
	);
	const asTool = options.toolCalls !== undefined;
	// Plain objects are json, as in n8n's pinned data and the Code node.
	const items = core.normalizeItems(options.items ?? [{ json: {} }]);
	/** @type {CredentialStore} */
	const store = {};
	const credentials = Object.fromEntries(
		Object.entries(options.credentials ?? {}).map(([type, data], index) => {
			const details = { id: `harness-cred-${index + 1}`, name: `${type} (harness)` };
			store[details.id] = { ...details, type, data };
			return [type, details];
		}),
	);
	const onError = options.onError ?? 'stopWorkflow';
	const source = harnessNode('Harness Source', SOURCE_TYPE);
	/** @type {INode} */
	const testedNode = {
		...harnessNode('Node Under Test', asTool ? `${tested.name}Tool` : tested.name, [220, 0]),
		typeVersion: Math.max(...[tested.description.version].flat()),
		parameters: structuredClone(options.parameters ?? {}),
		credentials,
		onError,
		...pick(options, ['retryOnFail', 'maxTries', 'waitBetweenTries']),
		...options.nodeOverrides,
	};
	const successSink = harnessNode('Success Sink', SINK_TYPE, [440, -100]);
	const errorSink = harnessNode('Error Sink', SINK_TYPE, [440, 100]);
	const agent = harnessNode('Harness Agent', AGENT_TYPE, [440, 0]);
	const withErrorOutput = onError === 'continueErrorOutput';
	/** @param {INode} target @param {any} type */
	const to = ({ name }, type = NodeConnectionTypes.Main) => [{ node: name, type, index: 0 }];
	const workflow = new Workflow({
		id: options.workflowId ?? `harness-wf-${randomUUID().slice(0, 8)}`,
		name: `Harness: ${tested.name}`,
		nodes: asTool
			? [source, agent, testedNode]
			: [source, testedNode, successSink, ...(withErrorOutput ? [errorSink] : [])],
		connections: asTool
			? {
					[source.name]: { main: [to(agent)] },
					[testedNode.name]: { ai_tool: [to(agent, NodeConnectionTypes.AiTool)] },
				}
			: {
					[source.name]: { main: [to(testedNode)] },
					[testedNode.name]: {
						main: [to(successSink), ...(withErrorOutput ? [to(errorSink)] : [])],
					},
				},
		active: false,
		nodeTypes: createNodeTypes({
			// Closed over, not parameters, where `=`-prefixed strings would evaluate as expressions.
			[SOURCE_TYPE]: harnessNodeType('source', async () => [structuredClone(items)]),
			[SINK_TYPE]: standInNodeType(SINK_TYPE),
			[tested.name]: tested.type,
			...(asTool && {
				[AGENT_TYPE]: createAgentNodeType(options.toolCalls ?? [], options.parallelToolCalls),
				[testedNode.type]: toToolNodeType(tested.type),
			}),
		}),
		settings: { executionOrder: 'v1' },
	});
	const { run, executedNodes, logs, ...resumable } = await executeWorkflow({
		workflow,
		store,
		startNode: workflow.getNode(source.name),
		stopWhen: options.stopWhen,
		diesWhen: options.diesWhen,
	});
	/** @param {IRun} ran */
	const describe = (ran) => {
		const { runData, error } = ran.data.resultData;
		const taskData = runData[testedNode.name]?.at(-1);
		const outputs = taskData?.data?.main ?? [];
		const agentOutput = runData[agent.name]?.at(-1)?.data?.main?.[0] ?? [];
		return {
			toolAnswers: agentOutput.map((item) => item.json),
			success: outputs[0] ?? [],
			errors: outputs[1] ?? [],
			error: /** @type {RunError | undefined} */ (error),
			nodeError: /** @type {RunError | undefined} */ (taskData?.error),
			waitTill: ran.waitTill,
			run: ran,
			node: /** @type {INode} */ (workflow.getNode(testedNode.name)),
		};
	};
	return {
		...describe(run),
		logs,
		executedNodes,
		...createResumer({ run, workflow, ...resumable }, describe),
	};
}

/**
 * The JSON the editor exports (Download).
 * @typedef {{ id?: string, name?: string, nodes: INode[], connections: IConnections,
 *   settings?: import('n8n-workflow').IWorkflowSettings, pinData?: Record<string, unknown[]> }} ExportedWorkflow
 */

/**
 * Runs an export unchanged as a manual "Execute workflow"; pinned data (the export's, then
 * `pinData`, by node name; plain objects are json) replaces a node's run. Nodes of a loaded package
 * get the `credentials` of each type they declare, whatever the export names. The run starts at the
 * only node no connection leads to. `outputs`: per node that ran, its last run's main outputs.
 * @param {ExportedWorkflow} exported
 * @param {{ packageDir: string, credentials?: Record<string, ICredentialDataDecryptedObject>,
 *   pinData?: Record<string, unknown[]> }} options
 */
async function runWorkflowFile(exported, { packageDir, credentials = {}, pinData: pinned }) {
	await loadPackage(packageDir);
	/** @type {INode[]} */
	const nodes = structuredClone(exported.nodes);
	const { connections } = exported;
	const pinData = Object.fromEntries(
		Object.entries({ ...exported.pinData, ...pinned }).map(([name, items]) => [
			name,
			core.normalizeItems(items),
		]),
	);
	/** @type {CredentialStore} */
	const store = {};
	/** @type {Record<string, INodeType>} */
	const standIns = {};
	for (const node of nodes) {
		if (!nodeRegistry.has(node.type)) standIns[node.type] = standInNodeType(node.type);
		for (const { name: type } of nodeRegistry.get(node.type)?.description.credentials ?? []) {
			const details = { id: type, name: `${type} (harness)` };
			store[type] = { ...details, type, data: credentials[type] };
			node.credentials = { ...node.credentials, [type]: details };
		}
	}
	const targets = new Set(
		Object.values(connections).flatMap((byType) =>
			Object.values(byType)
				.flat(2)
				.map((target) => target?.node),
		),
	);
	const roots = nodes.filter(
		(node) =>
			node.type !== 'n8n-nodes-base.stickyNote' && !node.disabled && !targets.has(node.name),
	);
	if (roots.length !== 1) throw new Error(`Not one node to start at: ${roots.map((n) => n.name)}`);
	const workflow = new Workflow({
		id: exported.id,
		name: exported.name,
		nodes,
		connections,
		active: false,
		nodeTypes: createNodeTypes(standIns),
		settings: exported.settings,
		pinData,
	});
	const startNode = workflow.getNode(roots[0].name);
	const { run, executedNodes, logs } = await executeWorkflow({
		workflow,
		store,
		startNode,
		pinData,
	});
	const { runData, error } = run.data.resultData;
	const outputs = Object.fromEntries(
		Object.entries(runData).map(([name, tasks]) => [name, tasks.at(-1)?.data?.main ?? []]),
	);
	return { outputs, error, logs, executedNodes };
}

/**
 * The editor's "Test credential" as the CLI's CredentialsTester runs a credential's own `test`
 * request: by RoutingNode in 'internal' mode on a throw-away node whose only property routes it.
 * A failure is matched against `responseCode` rules, else reads `statusText || "Received HTTP
 * status code: N"`, the network error code or the message; a success against
 * `responseSuccessBody` rules, else "Connection successful!".
 * @param {{ credentialType: string, data: ICredentialDataDecryptedObject, packageDir: string }} options
 * @returns {Promise<INodeCredentialTestResult>}
 */
async function testCredential({ credentialType: type, data, packageDir }) {
	await loadPackage(packageDir);
	const testRequest = /** @type {import('n8n-workflow').ICredentialTestRequest} */ (
		credentialType(type).test
	);
	const details = { id: 'harness-cred-test', name: `${type} (harness)` };
	const additionalData = createAdditionalData({
		credentialsHelper: createCredentialsHelper({ [details.id]: { ...details, type, data } }),
	});
	// The CLI borrows n8n-nodes-base.noOp's description, which is not installed: an equivalent.
	const { description } = standInNodeType(SINK_TYPE);
	const node = { ...harnessNode('Temp-Node', SINK_TYPE), credentials: { [type]: details } };
	/** @type {INodeType} */
	const testNodeType = {
		description: {
			...description,
			credentials: [{ name: type, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: createNodeTypes({ [SINK_TYPE]: testNodeType }),
	});
	const context = new core.ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		/** @type {any} */ ({ resultData: { runData: {} } }),
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	const credentials = { ...details, type, data: credentialData(type, data) };
	const { rules = [] } = testRequest;
	const fail = (/** @type {string} */ message) => ({
		status: /** @type {const} */ ('Error'),
		message,
	});
	try {
		const response = await new core.RoutingNode(context, testNodeType, credentials).runNode();
		const body = response?.[0]?.[0]?.json;
		const rule = rules.find(
			(candidate) =>
				candidate.type === 'responseSuccessBody' &&
				get(body, candidate.properties.key) === candidate.properties.value,
		);
		return rule
			? fail(rule.properties.message)
			: { status: 'OK', message: 'Connection successful!' };
	} catch (caught) {
		const error = /** @type {any} */ (caught);
		Container.get(core.ErrorReporter).error(error);
		const answer = error.cause?.response;
		if (answer) {
			const rule = rules.find(
				(candidate) =>
					candidate.type === 'responseCode' && candidate.properties.value === answer.status,
			);
			return fail(
				rule?.properties.message ??
					(answer.statusText || `Received HTTP status code: ${answer.status}`),
			);
		}
		if (error.cause?.code) return fail(error.cause.code);
		Container.get(Logger).debug('Credential test failed', error);
		return fail(String(error.message));
	}
}

module.exports = {
	loadPackage,
	runWorkflow,
	runWorkflowFile,
	testCredential,
	getLogs,
	clearLogs,
	shutdown,
	deduplicationStore,
	// For the tests of what differs between the engines.
	internals: { core, workflowLib },
};
