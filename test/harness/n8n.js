// @ts-check
'use strict';

/**
 * Runs a community package in n8n-core's real engine (WorkflowExecute, RoutingNode, the real HTTP
 * stack) as a server does; only what the CLI keeps in its database (credentials, the deduplication
 * store, log sinks) is in memory. ./resolve.js loads the engine ./engines.js picks from n8n-core's
 * own location: npm hoists older @n8n/* copies whose DI tokens would silently configure nothing.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const { coreRequire, coreHas, coreInternal, engine } = require('./resolve');

const core = coreRequire('n8n-core');
/** @type {typeof import('n8n-workflow')} */
const workflowLib = coreRequire('n8n-workflow');
const { Container } = coreRequire('@n8n/di');
const { Logger } = coreRequire('@n8n/backend-common');
const { get, pick } = coreRequire('lodash');
// 2.x sends requests through @n8n/backend-network's OutboundHttp (a DI service); 1.x uses axios.
const { OutboundHttp } = coreHas('@n8n/backend-network')
	? coreRequire('@n8n/backend-network')
	: { OutboundHttp: undefined };

const { Workflow, NodeHelpers, NodeConnectionTypes, UserError } = workflowLib;

/**
 * @import { INodeExecutionData, INodeType, IVersionedNodeType, ICredentialType, INode, INodeTypes,
 *   IRun, IRunData, INodeParameters, IConnections, WorkflowExecuteMode, INodeCredentialTestResult,
 *   ICredentialDataDecryptedObject } from 'n8n-workflow'
 * @typedef {Record<string, { id: string, name: string, type: string,
 *   data: ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject) }>} CredentialStore
 */

/** @type {string[]} */
const logLines = [];

/** JSON.stringify that survives cycles, BigInt and Errors (whose message would be lost). */
function safeStringify(/** @type {unknown} */ value) {
	const seen = new WeakSet();
	return JSON.stringify(value, (_key, v) => {
		if (typeof v === 'bigint') return v.toString();
		if (v instanceof Error) return { ...v, name: v.name, message: v.message, stack: v.stack };
		if (v && typeof v === 'object') {
			if (seen.has(v)) return '[Circular]';
			seen.add(v);
		}
		return v;
	});
}

// Stands in for the winston backend of n8n's real Logger: one line per entry, message AND
// metadata, so a test can assert a secret appears nowhere n8n would write it.
function createCaptureBackend(/** @type {string[]} */ scopes = []) {
	return {
		levels: { error: 0, warn: 1, info: 2, debug: 3 },
		log(/** @type {string} */ level, /** @type {string} */ message, /** @type {unknown} */ meta) {
			const scopePart = scopes.length ? ` [${scopes.join(',')}]` : '';
			const metaPart =
				meta && typeof meta === 'object' && Object.keys(meta).length
					? ` ${safeStringify(meta)}`
					: '';
			logLines.push(`${level}${scopePart}: ${message}${metaPart}`);
		},
		child(/** @type {{ scopes?: string[] }} */ options) {
			return createCaptureBackend([...scopes, ...(options?.scopes ?? [])]);
		},
	};
}

/** All log lines captured so far (in this jest module registry). */
const getLogs = () => [...logLines];
const clearLogs = () => void (logLines.length = 0);

// DI bootstrap (once per module registry, i.e. once per jest test file).

/** @type {{ instanceSettings: any } | undefined} */
let services;

function ensureServices() {
	if (services) return services;
	// InstanceSettings writes a tiny `config` file there (always the same key): shared, no cleanup.
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

	// Otherwise InstanceSettings creates ~/.n8n/config (the encryption key).
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
	// The real outbound HTTP client (2.x; SSRF protection off, as on a stock n8n) and the real
	// ErrorReporter, which un-initialised only logs.
	if (OutboundHttp) Container.get(OutboundHttp);
	Container.get(core.ErrorReporter);
	void core.DataDeduplicationService.init(createMemoryDeduplicator());

	services = { instanceSettings };
	return services;
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
	/** @param {{ workflow: object }} context */
	beforeCall(context) {
		this.calls++;
		if (this.failing.delete(this.calls)) throw new Error('SQLITE_BUSY: database is locked');
		assertAlive(context);
	},
};

// Executions whose n8n "died" (`diesWhen`): their store calls write nothing from then on. Keyed
// by Workflow instance, so the restarted n8n's run is unaffected.
/** @type {WeakSet<object>} */
const deadWorkflows = new WeakSet();

/** @param {{ workflow: object }} context */
function assertAlive(context) {
	if (deadWorkflows.has(context.workflow)) throw new Error('n8n died');
}

// The CLI's deduplicator in "entries" mode: per workflow and scope ('node': per node id) one row,
// the `maxEntries` newest values kept, a value repeated in one call new (and recorded) each time.
// Each call reads and rewrites the row, so overlapping calls lose writes, as on the server.
function createMemoryDeduplicator() {
	/** @type {Map<string, string[]>} */
	const store = new Map();
	/** @param {string} scope @param {any} context */
	const keyOf = (scope, context) =>
		`${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	// Yields as the database round trip does.
	const readRow = async (/** @type {string} */ key, /** @type {any} */ context) => {
		const recorded = [...(store.get(key) ?? [])];
		await new Promise((resolve) => setImmediate(resolve));
		assertAlive(context);
		return recorded;
	};
	// The two calls the node makes; the store's other methods are not served.
	return {
		/** @param {string[]} items @param {string} scope @param {any} context @param {{ mode: string, maxEntries?: number }} options */
		async checkProcessedAndRecord(items, scope, context, options) {
			if (options.mode !== 'entries') throw new Error('harness deduplicator: entries mode only');
			deduplicationStore.beforeCall(context);
			const key = keyOf(scope, context);
			const recorded = await readRow(key, context);
			const known = new Set(recorded);
			/** @type {{ new: string[], processed: string[] }} */
			const result = { new: [], processed: [] };
			for (const item of items) {
				if (known.has(String(item))) result.processed.push(item);
				else {
					result.new.push(item);
					recorded.push(String(item));
				}
			}
			if (options.maxEntries) recorded.splice(0, Math.max(0, recorded.length - options.maxEntries));
			store.set(key, recorded);
			return result;
		},
		/** @param {string[]} items @param {string} scope @param {any} context */
		async removeProcessed(items, scope, context) {
			deduplicationStore.beforeCall(context);
			const key = keyOf(scope, context);
			const recorded = await readRow(key, context);
			for (const item of items) {
				const index = recorded.indexOf(String(item));
				if (index !== -1) recorded.splice(index, 1);
			}
			store.set(key, recorded);
		},
	};
}

// Called by jest-setup.js after each file: 1.x's SSHClientsManager starts a ref'd 60 s interval
// that only onShutdown() clears (2.x unrefs it), else jest never exits.
function shutdown() {
	const { SSHClientsManager } = coreInternal('dist/execution-engine/ssh-clients-manager');
	if (Container.has(SSHClientsManager)) Container.get(SSHClientsManager).onShutdown();
}
/** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')] = shutdown;

// Node and credential types (what LoadNodesAndCredentials does in the CLI).

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
const latestDescription = (type) =>
	'nodeVersions' in type ? type.nodeVersions[type.currentVersion].description : type.description;

// Loads a built package as the server does, by n8n-core's PackageDirectoryLoader (which adds
// declarative "Request Options", fixes icon paths, validates descriptions). Cached per directory.
/** @param {string} packageDir @returns {Promise<LoadedPackage>} */
async function loadPackage(packageDir) {
	ensureServices();
	const directory = fs.realpathSync(path.resolve(packageDir));
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
		nodeRegistry.set(name, loaded.nodes[name]);
	}
	for (const [name, { type }] of Object.entries(loader.credentialTypes)) {
		const supportedNodes = (loader.known.credentials[name]?.supportedNodes ?? []).map(
			(/** @type {string} */ node) => `${packageName}.${node}`,
		);
		loaded.credentials[name] = { name, type, supportedNodes };
		credentialRegistry.set(name, loaded.credentials[name]);
	}
	packagesByDir.set(directory, loaded);
	return loaded;
}

/** @param {string} name @returns {ICredentialType} */
function credentialType(name) {
	const entry = credentialRegistry.get(name);
	if (!entry) throw new core.UnrecognizedCredentialTypeError(name);
	return entry.type;
}

// As CredentialsHelper.applyDefaultsAndOverwrites: the stored data (a function: read at each try)
// with defaults, unknown keys dropped. Expressions in it are not resolved: no test writes one.
/** @param {string} type @param {ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject)} stored */
function credentialData(type, stored) {
	const data = structuredClone(typeof stored === 'function' ? stored() : stored);
	const { properties } = credentialType(type);
	return /** @type {ICredentialDataDecryptedObject} */ (
		NodeHelpers.getNodeParameters(properties, /** @type {any} */ (data), true, false, null, null)
	);
}

// The CLI's CredentialsHelper, serving `store`, for what this package's credential needs: no
// OAuth, no preAuthentication (so n8n-core re-sends a thrown 401 once, as on the server).
/** @param {CredentialStore} store */
function createCredentialsHelper(store) {
	/** @param {{ id?: string | null, name?: string }} details @param {string} type */
	const find = (details, type) => {
		const stored = details?.id ? store[details.id] : undefined;
		if (!stored || stored.type !== type) {
			// The wording of the CLI's CredentialNotFoundError.
			throw new UserError(`Credential with ID "${details?.id}" does not exist for type "${type}".`);
		}
		return stored;
	};
	return {
		getParentTypes: () => [],
		isCredentialUsableByNode: () => true,
		/** @param {string} type */
		getCredentialsProperties: (type) => credentialType(type).properties,
		/** @param {any} _additionalData @param {any} details @param {string} type */
		getDecrypted: async (_additionalData, details, type) =>
			credentialData(type, find(details, type).data),
		/** @param {ICredentialDataDecryptedObject} credentials @param {string} type @param {any} requestOptions */
		async authenticate(credentials, type, requestOptions) {
			const { authenticate } = credentialType(type);
			if (authenticate === undefined) return requestOptions;
			if (typeof authenticate !== 'function') {
				throw new Error('The test harness runs only a credential whose authenticate is a function');
			}
			return await authenticate(credentials, requestOptions);
		},
		preAuthentication: async () => undefined,
		runPreAuthentication: async () => undefined,
		updateCredentialsOauthTokenData: async () => {},
	};
}

// Harness node types: a source that emits the test items, a sink, an agent.

const SOURCE_TYPE = 'n8n-nodes-harness.source';
const SINK_TYPE = 'n8n-nodes-base.noOp';
const AGENT_TYPE = 'n8n-nodes-harness.agent';

/**
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

// Emits a copy of the items, like a Code node after the trigger. Closed over, not parameters,
// where `=`-prefixed strings would evaluate as expressions.
/** @param {INodeExecutionData[]} items */
const createSourceNodeType = (items) =>
	harnessNodeType('source', async () => [structuredClone(items)]);

/**
 * Stands in for an AI Agent or the MCP Server Trigger: its tools come from n8n-core
 * (getInputConnectionData wraps a `usableAsTool` node with createNodeAsTool, as for a real agent);
 * it calls the one tool per entry, in order, or all at once (`parallel`: several tool calls in one
 * model step). One item per call: `{ answer }` (what the model got) or `{ thrown }` (an MCP
 * client's `isError` result), with `toolName` and `toolDescription` (what the model reads).
 * @param {Array<Record<string, unknown>>} calls @param {boolean} [parallel] @returns {INodeType}
 */
function createAgentNodeType(calls, parallel = false) {
	return harnessNodeType(
		'agent',
		async function () {
			const tools = /** @type {any[]} */ (
				await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0)
			);
			const tool = tools[0];
			/** @param {Record<string, unknown>} args @returns {Promise<INodeExecutionData>} */
			const call = async (args) => {
				const about = { toolName: tool.name, toolDescription: tool.description };
				try {
					return { json: { ...about, answer: await tool.invoke(args) } };
				} catch (error) {
					return { json: { ...about, thrown: String(error?.message ?? error) } };
				}
			};
			/** @type {INodeExecutionData[]} */
			const answers = [];
			if (parallel) answers.push(...(await Promise.all(calls.map(call))));
			else for (const args of calls) answers.push(await call(args));
			return [answers];
		},
		[NodeConnectionTypes.Main, { type: NodeConnectionTypes.AiTool, displayName: 'Tools' }],
	);
}

// The "<name>Tool" type the server derives from a `usableAsTool` node (convertNodeToAiTool): the
// same class, with only an ai_tool output.
/** @param {INodeType} type @returns {INodeType} */
function toToolNodeType(type) {
	const description = structuredClone(latestDescription(type));
	description.name += 'Tool';
	description.displayName += ' Tool';
	description.inputs = [];
	description.outputs = [NodeConnectionTypes.AiTool];
	delete description.usableAsTool;
	const tool = Object.create(type);
	tool.description = description;
	return tool;
}

/** The loaded packages plus `extra`. @param {Record<string, INodeType>} extra @returns {INodeTypes} */
function createNodeTypes(extra) {
	/** @param {string} name */
	const getByName = (name) => {
		const type = extra[name] ?? nodeRegistry.get(name)?.type;
		if (!type) throw new core.UnrecognizedNodeTypeError(name.split('.')[0], name);
		return type;
	};
	return {
		getByName,
		getByNameAndVersion: (name, version) =>
			NodeHelpers.getVersionedNodeType(getByName(name), version),
		getKnownTypes: () => ({}),
	};
}

// additionalData (what the CLI's WorkflowExecuteAdditionalData.getBase builds)

/** @param {{ credentialsHelper: any, executionId?: string, workflowId?: string, hooks?: any }} options */
function createAdditionalData({ credentialsHelper, executionId, workflowId, hooks }) {
	const base = 'http://localhost:5678/';
	const unsupported = (/** @type {string} */ what) => async () => {
		throw new workflowLib.UserError(`${what} is not supported by the test harness`);
	};
	return /** @type {any} */ ({
		credentialsHelper,
		hooks,
		executionId,
		workflowId,
		userId: 'harness-user',
		projectId: 'harness-project',
		currentNodeExecutionIndex: 0,
		currentNodeParameters: undefined,
		executionTimeoutTimestamp: undefined,
		restApiUrl: `${base}rest`,
		instanceBaseUrl: base,
		formBaseUrl: `${base}form`,
		formWaitingBaseUrl: `${base}form-waiting`,
		formTestBaseUrl: `${base}form-test`,
		webhookBaseUrl: `${base}webhook`,
		webhookWaitingBaseUrl: `${base}webhook-waiting`,
		webhookTestBaseUrl: `${base}webhook-test`,
		mcpBaseUrl: `${base}mcp`,
		mcpTestBaseUrl: `${base}mcp-test`,
		variables: {},
		setExecutionStatus: () => {},
		logAiEvent: () => {},
		executeWorkflow: unsupported('Executing sub-workflows'),
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		startRunnerTask: unsupported('Task runners (Code node)'),
	});
}

/**
 * WorkflowExecute.run as ManualExecutionService calls it: an options object on 2.x, positional
 * arguments on 1.x (with hasValidSignature, the only API the engines differ in).
 * @param {any} workflowExecute @param {import('n8n-workflow').Workflow} workflow
 * @param {INode | undefined} startNode @param {import('n8n-workflow').IPinData} [pinData]
 */
function startRun(workflowExecute, workflow, startNode, pinData) {
	return engine.major === 1
		? workflowExecute.run(workflow, startNode, undefined, pinData)
		: workflowExecute.run({ workflow, startNode, pinData });
}

/**
 * Runs a built workflow as a manual run does; hooks record the executed nodes in order.
 * @param {{ workflow: import('n8n-workflow').Workflow, store: CredentialStore, mode: WorkflowExecuteMode,
 *   startNode: INode | undefined, pinData?: any, stopWhen?: () => boolean, diesWhen?: () => boolean }} run
 */
async function executeWorkflow({ workflow, store, mode, startNode, pinData, stopWhen, diesWhen }) {
	const executionId = `${Math.floor(Math.random() * 1e9)}`;
	const workflowId = /** @type {string} */ (workflow.id);
	/** @type {string[]} */
	const executedNodes = [];
	const hooks = new core.ExecutionLifecycleHooks(mode, executionId, {
		id: workflowId,
		name: workflow.name,
		active: false,
		isArchived: false,
		nodes: Object.values(workflow.nodes),
		connections: workflow.connectionsBySourceNode,
		settings: workflow.settings,
		createdAt: new Date(),
		updatedAt: new Date(),
	});
	hooks.addHandler('nodeExecuteAfter', (/** @type {string} */ name) => {
		executedNodes.push(name);
	});
	const credentialsHelper = createCredentialsHelper(store);
	const additionalData = createAdditionalData({
		credentialsHelper,
		executionId,
		workflowId,
		hooks,
	});
	const logStart = logLines.length;
	const workflowExecute = new core.WorkflowExecute(additionalData, mode);
	const execution = startRun(workflowExecute, workflow, startNode, pinData);
	// What n8n's Stop button (and an execution timeout) does: cancel the running execution.
	// n8n dying: the execution ends there, and its store calls from then on write nothing.
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
		return { run, executedNodes, logs: logLines.slice(logStart), additionalData, executionId };
	} finally {
		clearInterval(watch);
	}
}

// Waiting executions: a node that called putExecutionToWait, resumed.

/** A browser's User-Agent, for the requests a person makes by opening a link. */
const BROWSER_USER_AGENT =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

/**
 * A request to a resume URL (e.g. a link in an email), by default a GET with a browser's User-Agent
 * only, `body` parsed; the answer's `body` is what the browser gets.
 * @typedef {{ url: string, method?: 'GET' | 'HEAD' | 'POST', headers?: Record<string, string>,
 *   body?: Record<string, unknown> }} WaitingWebhookRequest
 * @typedef {{ status: number, body: unknown, resumed: boolean }} WaitingWebhookAnswer
 */

/**
 * Resumes a waiting execution as the server does (cli waiting-webhooks.ts, webhook-helpers.ts): a
 * request to its resume URL passes the signature check, finds the node's restart webhook for the
 * method and calls its `webhook`; returned `workflowData` becomes the input of the node, now
 * disabled, and the execution goes on. Past the wait limit (WaitTracker) the input passes through.
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
			const target = new URL(url);
			const [, nodeId] = target.pathname.split(`/webhook-waiting/${executionId}/`);
			if (!run.waitTill)
				return { status: 409, body: 'The execution is not waiting', resumed: false };
			const nodeName = /** @type {string} */ (run.data.resultData.lastNodeExecuted);
			const node = /** @type {INode} */ (workflow.getNode(nodeName));
			if (node.parameters.operation === 'sendAndWait' && !hasValidSignature(target)) {
				return { status: 401, body: { error: 'Invalid token' }, resumed: false };
			}
			const nodeType = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			const webhookDescription = (nodeType.description.webhooks ?? []).find(
				(candidate) =>
					candidate.httpMethod === method &&
					candidate.restartWebhook === true &&
					workflow.expression.getSimpleParameterValue(node, candidate.path, mode, {}) === nodeId,
			);
			if (!webhookDescription || !nodeType.webhook) {
				return {
					status: 404,
					body: 'No waiting webhook with this path and method',
					resumed: false,
				};
			}
			/** @type {{ statusCode: number, body: unknown }} */
			const sent = { statusCode: 200, body: undefined };
			const response = {
				status: (/** @type {number} */ code) => ((sent.statusCode = code), response),
				setHeader: () => response,
				send: (/** @type {unknown} */ data) => ((sent.body = data), response),
				end: (/** @type {unknown} */ data) => ((sent.body ??= data), response),
			};
			const context = new core.WebhookContext(
				workflow,
				node,
				{
					...additionalData,
					httpRequest: {
						method,
						url: `${target.pathname}${target.search}`,
						query: Object.fromEntries(target.searchParams),
						headers,
						params: {},
						body: body ?? {},
					},
					httpResponse: response,
				},
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
			const answer = await nodeType.webhook.call(context);
			const page = answer.noWebhookResponse ? sent.body : answer.webhookResponse;
			if (answer.workflowData === undefined) {
				return { status: sent.statusCode, body: page, resumed: false };
			}
			run.data.waitTill = undefined;
			const stackEntry = run.data.executionData.nodeExecutionStack[0];
			stackEntry.node.disabled = true;
			stackEntry.data.main = answer.workflowData;
			stackEntry.metadata = { ...stackEntry.metadata, forwardAllOutputs: true };
			run.data.resultData.runData[nodeName].pop();
			return { status: sent.statusCode, body: page, resumed: true, result: await goOn() };
		},
		passWaitLimit: goOn,
		// Retry in the Executions list (ExecutionService.retry, both lines): the data as stored (the
		// node context survives), its error and the failed node's last run removed, run on from the
		// node stack, which still holds the failed node with its input. Retries the latest execution.
		async retryExecution() {
			if (!run.data.resultData.error) throw new Error('The execution succeeded: no Retry');
			run = { ...run, data: JSON.parse(JSON.stringify(run.data)) };
			const { resultData } = run.data;
			delete resultData.error;
			const nodeRuns =
				resultData.lastNodeExecuted && resultData.runData[resultData.lastNodeExecuted];
			if (nodeRuns && nodeRuns.at(-1)?.error !== undefined) nodeRuns.pop();
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
	const { instanceSettings } = ensureServices();
	// 1.x signs the host as well as the path and query; 2.x the path and query.
	const expected = generateUrlSignature(
		prepareUrlForSigning(unsigned),
		instanceSettings.hmacSignatureSecret,
	);
	return signature === expected;
}

/** A plain object is an item's json, as n8n's pinned data and the Code node take it. @param {any} item */
const asItem = (item) =>
	item && typeof item === 'object' && 'json' in item && typeof item.json === 'object'
		? /** @type {INodeExecutionData} */ (item)
		: { json: item };

/**
 * @typedef {object} RunWorkflowOptions
 * @property {string} nodeType    full type name, `<package>.<node>`
 * @property {string} [packageDir] load this package first (cached)
 * @property {INodeParameters} [parameters]
 * @property {Array<INodeExecutionData | Record<string, unknown>>} [items] default: one empty item
 * @property {Record<string, ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject)>} [credentials]
 *   by type; a function is read at each try (e.g. a Base URL where nothing listens on the first)
 * @property {'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput'} [onError]
 * @property {Array<Record<string, unknown>>} [toolCalls] run the node as an agent's tool, once per entry
 * @property {boolean} [parallelToolCalls] the agent makes the tool calls all at once
 * @property {string} [workflowId] give one to share the deduplication store between runs
 * @property {boolean} [retryOnFail]
 * @property {number} [maxTries]
 * @property {number} [waitBetweenTries]
 * @property {Partial<INode>} [nodeOverrides] merged into the tested node
 * @property {import('n8n-workflow').IWorkflowSettings} [settings] default `{ executionOrder: 'v1' }`
 * @property {() => boolean} [stopWhen] polled every 2 ms; once true the execution is stopped as the
 *   Stop button does (`cancel()`), and the run resolves when the tested node returns
 * @property {() => boolean} [diesWhen] likewise, but n8n "dies": its store calls write nothing more
 */

/**
 * @typedef {object} RunWorkflowResult
 * @property {INodeExecutionData[]} success  main output 0 of the tested node
 * @property {INodeExecutionData[]} errors   main output 1 (continueErrorOutput)
 * @property {IRunData} runData
 * @property {any} error                     resultData.error when the execution failed
 * @property {any} nodeError                 the tested node's task error
 * @property {string[]} logs                 log lines n8n emitted during this run
 * @property {string[]} executedNodes        in the order nodeExecuteAfter fired
 * @property {IRun} run
 * @property {import('n8n-workflow').Workflow} workflow
 * @property {INode} node                    the tested node as placed in the workflow
 * @property {Array<Record<string, any>>} toolAnswers  with `toolCalls`: `{ answer }` or `{ thrown }` per call
 * @property {Date | undefined} waitTill     set when the execution waits
 * @property {(request: WaitingWebhookRequest) => Promise<WaitingWebhookAnswer & { result?: any }>} callWebhook
 *   `result` (this shape) when it resumed the execution
 * @property {() => Promise<any>} passWaitLimit
 * @property {() => Promise<any>} retryExecution  Retry as in the Executions list (this shape)
 */

/**
 * Builds `Source -> Node Under Test -> Success Sink (+ Error Sink)` and runs it with
 * WorkflowExecute.run, as the CLI's ManualExecutionService does for a full manual run.
 * @param {RunWorkflowOptions} options @returns {Promise<RunWorkflowResult>}
 */
async function runWorkflow(options) {
	ensureServices();
	if (options.packageDir) await loadPackage(options.packageDir);

	const tested = nodeRegistry.get(options.nodeType);
	if (!tested) throw new Error(`Node type "${options.nodeType}" is not loaded (packageDir)`);
	const description = tested.description;
	const asTool = options.toolCalls !== undefined;
	const testedTypeName = asTool ? `${tested.name}Tool` : tested.name;
	const typeVersion = Array.isArray(description.version)
		? Math.max(...description.version)
		: description.version;

	const items = (options.items ?? [{ json: {} }]).map(asItem);

	/** @type {Record<string, { id: string, name: string }>} */
	const nodeCredentials = {};
	/** @type {CredentialStore} */
	const store = {};
	Object.entries(options.credentials ?? {}).forEach(([type, data], index) => {
		const id = `harness-cred-${index + 1}`;
		const name = `${type} (harness)`;
		nodeCredentials[type] = { id, name };
		store[id] = { id, name, type, data: typeof data === 'function' ? data : structuredClone(data) };
	});

	const onError = options.onError ?? 'stopWorkflow';

	/** @param {string} name @param {string} type @param {[number, number]} position @returns {INode} */
	const harnessNode = (name, type, position) => ({
		id: randomUUID(),
		name,
		type,
		typeVersion: 1,
		position,
		parameters: {},
	});
	const sourceNode = harnessNode('Harness Source', SOURCE_TYPE, [0, 0]);
	/** @type {INode} */
	const testedNode = {
		id: randomUUID(),
		name: 'Node Under Test',
		type: testedTypeName,
		typeVersion,
		position: [220, 0],
		parameters: structuredClone(options.parameters ?? {}),
		credentials: nodeCredentials,
		onError,
		...pick(options, ['retryOnFail', 'maxTries', 'waitBetweenTries']),
		...options.nodeOverrides,
	};
	const successSink = harnessNode('Success Sink', SINK_TYPE, [440, -100]);
	const errorSink = harnessNode('Error Sink', SINK_TYPE, [440, 100]);
	const agentNode = harnessNode('Harness Agent', AGENT_TYPE, [440, 0]);

	const withErrorOutput = onError === 'continueErrorOutput';
	const nodes = asTool
		? [sourceNode, agentNode, testedNode]
		: [sourceNode, testedNode, successSink, ...(withErrorOutput ? [errorSink] : [])];
	/** @param {INode} to @param {any} type */
	const to = ({ name }, type = NodeConnectionTypes.Main) => [{ node: name, type, index: 0 }];
	/** @type {IConnections} */
	const connections = asTool
		? {
				[sourceNode.name]: { main: [to(agentNode)] },
				[testedNode.name]: { ai_tool: [to(agentNode, NodeConnectionTypes.AiTool)] },
			}
		: {
				[sourceNode.name]: { main: [to(testedNode)] },
				[testedNode.name]: {
					main: [to(successSink), ...(withErrorOutput ? [to(errorSink)] : [])],
				},
			};

	const workflowId = options.workflowId ?? `harness-wf-${randomUUID().slice(0, 8)}`;
	const settings = options.settings ?? { executionOrder: 'v1' };
	const workflow = new Workflow({
		id: workflowId,
		name: `Harness: ${tested.name}`,
		nodes,
		connections,
		active: false,
		nodeTypes: createNodeTypes({
			[SOURCE_TYPE]: createSourceNodeType(items),
			[SINK_TYPE]: standInNodeType(SINK_TYPE),
			...(asTool && {
				[AGENT_TYPE]: createAgentNodeType(options.toolCalls ?? [], options.parallelToolCalls),
				[testedTypeName]: toToolNodeType(tested.type),
			}),
		}),
		settings,
	});

	const startNode = workflow.getNode(sourceNode.name) ?? undefined;
	const mode = 'manual';
	const { run, executedNodes, logs, additionalData, executionId } = await executeWorkflow({
		workflow,
		store,
		mode,
		startNode,
		stopWhen: options.stopWhen,
		diesWhen: options.diesWhen,
	});

	/** @param {IRun} ran */
	const describe = (ran) => {
		const runData = ran.data.resultData.runData;
		const taskData = runData[testedNode.name]?.at(-1);
		const outputs = taskData?.data?.main ?? [];
		const agentOutput = runData[agentNode.name]?.at(-1)?.data?.main?.[0] ?? [];
		return {
			toolAnswers: agentOutput.map((item) => item.json),
			success: outputs[0] ?? [],
			errors: outputs[1] ?? [],
			runData,
			error: ran.data.resultData.error,
			nodeError: taskData?.error,
			waitTill: ran.waitTill,
			run: ran,
			workflow,
			node: /** @type {INode} */ (workflow.getNode(testedNode.name)),
		};
	};
	return {
		...describe(run),
		logs,
		executedNodes,
		...createResumer({ run, workflow, additionalData, mode, executionId }, describe),
	};
}

// For a type no loaded package has (n8n-nodes-base is not installed); any but the Manual Trigger
// and No Operation must be pinned (n8n then outputs the pinned data instead of running the node).
/** @param {string} typeName @returns {INodeType} */
function standInNodeType(typeName) {
	const trigger = typeName === 'n8n-nodes-base.manualTrigger';
	return {
		description: {
			displayName: `${typeName} (harness)`,
			name: typeName,
			group: [trigger ? 'trigger' : 'transform'],
			version: 1,
			description: `Stands in for ${typeName}`,
			defaults: { name: typeName },
			inputs: trigger ? [] : [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			properties: [],
		},
		async execute() {
			if (trigger) return [[{ json: {} }]];
			if (typeName === 'n8n-nodes-base.noOp') return [this.getInputData()];
			throw new UserError(`The test harness cannot run "${typeName}": pin its output`);
		},
	};
}

/**
 * The JSON the editor exports (Download).
 * @typedef {{ id?: string, name?: string, nodes: INode[], connections: IConnections,
 *   settings?: import('n8n-workflow').IWorkflowSettings, pinData?: Record<string, unknown[]> }} ExportedWorkflow
 */

/**
 * Runs an export unchanged as a manual "Execute workflow": nodes keep parameters, settings (On
 * Error, Retry On Fail, Execute Once, ...) and connections; pinned data (the export's, then
 * `pinData`, by node name; plain objects are json) replaces a node's run. Nodes of a loaded package
 * get the `credentials` of each type they declare, whatever the export names. The run starts at the
 * only node no connection leads to. `outputs`: per node that ran, its last run's main outputs.
 * @param {ExportedWorkflow} exported
 * @param {{ packageDir?: string, credentials?: Record<string, ICredentialDataDecryptedObject>,
 *   pinData?: Record<string, unknown[]> }} [options]
 */
async function runWorkflowFile(exported, options = {}) {
	ensureServices();
	if (options.packageDir) await loadPackage(options.packageDir);
	/** @type {INode[]} */
	const nodes = structuredClone(exported.nodes);
	const { connections } = exported;
	const pinData = Object.fromEntries(
		Object.entries({ ...exported.pinData, ...options.pinData }).map(([name, items]) => [
			name,
			items.map(asItem),
		]),
	);
	/** @type {CredentialStore} */
	const store = {};
	for (const node of nodes) {
		for (const { name: type } of nodeRegistry.get(node.type)?.description.credentials ?? []) {
			const data = options.credentials?.[type];
			if (!data) continue;
			store[type] = { id: type, name: `${type} (harness)`, type, data };
			node.credentials = { ...node.credentials, [type]: { id: type, name: `${type} (harness)` } };
		}
	}
	/** @type {Record<string, INodeType>} */
	const standIns = {};
	for (const { type } of nodes) if (!nodeRegistry.has(type)) standIns[type] = standInNodeType(type);

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
	if (roots.length !== 1) {
		throw new Error(`The run must start at one node; these could: ${roots.map((n) => n.name)}`);
	}
	const workflowId = exported.id ?? `harness-wf-${randomUUID().slice(0, 8)}`;
	const settings = exported.settings ?? {};
	const workflow = new Workflow({
		id: workflowId,
		name: exported.name ?? 'Harness: exported workflow',
		nodes,
		connections,
		active: false,
		nodeTypes: createNodeTypes(standIns),
		settings,
		pinData,
	});
	const { run, executedNodes, logs } = await executeWorkflow({
		workflow,
		store,
		mode: 'manual',
		startNode: workflow.getNode(roots[0].name) ?? undefined,
		pinData,
	});
	const { runData, error } = run.data.resultData;
	const outputs = Object.fromEntries(
		Object.entries(runData).map(([name, tasks]) => [
			name,
			(tasks.at(-1)?.data?.main ?? []).map((items) => items ?? []),
		]),
	);
	return { outputs, runData, error, logs, executedNodes };
}

/**
 * The editor's "Test credential" as the CLI's CredentialsTester runs it for a credential with its
 * own `test` request (not a node's `testedBy`): the data with its defaults, the request run by
 * RoutingNode in 'internal' mode on a throw-away node whose only property routes it. A failure is
 * matched against `responseCode` rules, else reads `statusText || "Received HTTP status code: N"`,
 * the network error code or the message; a success against `responseSuccessBody` rules, else
 * "Connection successful!".
 * @param {{ credentialType: string, data: ICredentialDataDecryptedObject, packageDir?: string }} options
 * @returns {Promise<INodeCredentialTestResult>}
 */
async function testCredential({ credentialType: type, data, packageDir }) {
	ensureServices();
	if (packageDir) await loadPackage(packageDir);
	const testRequest = credentialType(type).test;
	if (testRequest === undefined) {
		return { status: 'Error', message: 'No testing function found for this credential.' };
	}
	const details = { id: 'harness-cred-test', name: `${type} (harness)` };
	const additionalData = createAdditionalData({
		credentialsHelper: createCredentialsHelper({ [details.id]: { ...details, type, data } }),
	});
	const credentials = { ...details, type, data: credentialData(type, data) };
	// The CLI borrows n8n-nodes-base.noOp's description, which is not installed: an equivalent.
	const description = {
		...standInNodeType('n8n-nodes-base.noOp').description,
		displayName: 'No Operation, do nothing',
	};
	/** @type {INode} */
	const node = {
		id: 'temp',
		name: 'Temp-Node',
		type: description.name,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { [type]: details },
	};
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
		nodeTypes: createNodeTypes({ [node.type]: testNodeType }),
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
	const rules = testRequest.rules ?? [];
	/** @type {INodeExecutionData[][] | null | undefined} */
	let response;
	try {
		response = await new core.RoutingNode(context, testNodeType, credentials).runNode();
	} catch (caught) {
		const error = /** @type {any} */ (caught);
		Container.get(core.ErrorReporter).error(error);
		const answer = error?.cause?.response;
		if (answer) {
			const rule = rules.find(
				(candidate) =>
					candidate.type === 'responseCode' && candidate.properties.value === answer.status,
			);
			if (rule) return { status: 'Error', message: rule.properties.message };
			if (answer.status < 199 || answer.status > 299) {
				const message = answer.statusText || `Received HTTP status code: ${answer.status}`;
				return { status: 'Error', message };
			}
		} else if (error?.cause?.code) {
			return { status: 'Error', message: error.cause.code };
		}
		Container.get(Logger).debug('Credential test failed', error);
		return { status: 'Error', message: String(error?.message) };
	}
	const body = response?.[0]?.[0]?.json;
	for (const rule of rules) {
		if (rule.type !== 'responseSuccessBody') continue;
		if (get(body, rule.properties.key) === rule.properties.value)
			return { status: 'Error', message: rule.properties.message };
	}
	return { status: 'OK', message: 'Connection successful!' };
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
	/** for the tests of what differs between the engines */
	internals: { core, workflowLib },
};
