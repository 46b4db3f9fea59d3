// @ts-check
'use strict';

/**
 * Runs a community node package inside n8n-core's real engine (WorkflowExecute, ExecuteContext,
 * RoutingNode and the real HTTP stack: @n8n/backend-network on 2.x, n8n-core's axios helpers on
 * 1.x), the way an n8n server does. Nothing of the execution context is mocked: only what the
 * CLI keeps in its database (credentials, the deduplication store, log sinks) is in memory here.
 *
 *   loadPackage(packageDir)           the package as n8n's PackageDirectoryLoader loads it
 *   runWorkflow({ nodeType, parameters, items, credentials, onError, ... })
 *                                     Source -> node -> sinks, or the node as an agent's tool
 *   runWorkflowFile(export, options)  a workflow exported from the editor, as a manual run
 *   testCredential({ credentialType, data })   the editor's "Test credential"
 *   getLogs() / clearLogs()           every log line n8n emitted, with its metadata
 *   shutdown()                        stops what the engine started (jest-setup.js calls it)
 *
 * The engine (2.x or the last 1.x) is chosen in ./engines.js; ./resolve.js loads its packages
 * from n8n-core's own location, since npm hoists older copies of several @n8n/* packages whose DI
 * tokens would silently configure nothing. Plain CommonJS: n8n's lint forbids `fs` in the node.
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
 * @typedef {import('n8n-workflow').INodeExecutionData} INodeExecutionData
 * @typedef {import('n8n-workflow').INodeType} INodeType
 * @typedef {import('n8n-workflow').IVersionedNodeType} IVersionedNodeType
 * @typedef {import('n8n-workflow').ICredentialType} ICredentialType
 * @typedef {import('n8n-workflow').ICredentialDataDecryptedObject} ICredentialDataDecryptedObject
 * @typedef {import('n8n-workflow').INode} INode
 * @typedef {import('n8n-workflow').INodeTypes} INodeTypes
 * @typedef {import('n8n-workflow').IRun} IRun
 * @typedef {import('n8n-workflow').IRunData} IRunData
 * @typedef {import('n8n-workflow').INodeParameters} INodeParameters
 * @typedef {import('n8n-workflow').IConnections} IConnections
 * @typedef {import('n8n-workflow').WorkflowExecuteMode} WorkflowExecuteMode
 * @typedef {import('n8n-workflow').INodeCredentialTestResult} INodeCredentialTestResult
 * @typedef {Record<string, { id: string, name: string, type: string,
 *   data: ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject) }>} CredentialStore
 */

// Logging: a real n8n Logger whose winston backend is swapped for a capture.

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

/**
 * Stands in for the winston logger n8n's Logger wraps: each entry becomes one line with the
 * message AND all metadata, so a test can assert a secret appears nowhere n8n would write it.
 */
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

/**
 * Calls to n8n's deduplication store can fail on a real server (SQLite: "SQLITE_BUSY: database
 * is locked"), and a failed call writes nothing. A test makes the next calls fail with
 * `deduplicationStore.failCalls(1, 3)` (the 1st and 3rd from now, any method) and reads how
 * many calls a run made from `calls`.
 */
const deduplicationStore = {
	calls: 0,
	/** @type {Set<number>} */
	failing: new Set(),
	/** @param {...number} nth the calls to fail, counted from now, from 1 */
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

/**
 * Executions whose n8n "died" (runWorkflow's `diesWhen`): their store calls write nothing from
 * then on. Keyed by the execution's Workflow instance, so the restarted n8n's run is unaffected.
 * @type {WeakSet<object>}
 */
const deadWorkflows = new WeakSet();

/** @param {{ workflow: object }} context */
function assertAlive(context) {
	if (deadWorkflows.has(context.workflow)) throw new Error('n8n died');
}

/**
 * The server's database-backed deduplicator in "entries" mode
 * (packages/cli/src/deduplication/deduplication-helper.ts): per workflow and scope ('node':
 * per node id) one row holding a list of values; `checkProcessedAndRecord` splits the values
 * into recorded and new ones (recording the new ones, a value repeated in one call included),
 * keeping the `maxEntries` newest; `removeProcessed` deletes values. Each call reads the row and
 * writes it back, so overlapping calls lose writes, as on the server.
 */
function createMemoryDeduplicator() {
	/** @type {Map<string, string[]>} */
	const store = new Map();
	/** @param {string} scope @param {any} context */
	const keyOf = (scope, context) =>
		`${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	/** Reads the row, yields (as the database round trip does), checks n8n is still alive. */
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

/**
 * What the CLI's shutdown does for the services the engine starts on first use: n8n 1.x's
 * SSHClientsManager (created with the first ExecuteContext) starts a ref'd 60 s cleanup interval
 * that only onShutdown() clears (2.x unrefs it), so without this jest never exits.
 * test/harness/jest-setup.js calls it after every test file; safe to call more than once.
 */
function shutdown() {
	const { SSHClientsManager } = coreInternal('dist/execution-engine/ssh-clients-manager');
	if (Container.has(SSHClientsManager)) Container.get(SSHClientsManager).onShutdown();
}
/** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')] = shutdown;

// Node and credential types (what LoadNodesAndCredentials does in the CLI).

/**
 * Nodes by full type name (`<packageName>.<description.name>`, the description of the latest
 * version), credentials by type name with the full type names of the nodes that use them.
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

/**
 * Loads a built community package as the n8n server does, through n8n-core's
 * PackageDirectoryLoader (which adds the declarative "Request Options", fixes icon paths and
 * validates descriptions). Cached per directory.
 * @param {string} packageDir a directory whose package.json has an `n8n` section
 * @returns {Promise<LoadedPackage>}
 */
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

/**
 * The credential data a node gets: the stored data (a function: read again at each try) with
 * the type's defaults, as the CLI's CredentialsHelper.applyDefaultsAndOverwrites gives it
 * (getNodeParameters also drops unknown keys). Expressions in credential data are not resolved:
 * no test writes one.
 * @param {string} type @param {ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject)} stored
 */
function credentialData(type, stored) {
	const data = structuredClone(typeof stored === 'function' ? stored() : stored);
	const { properties } = credentialType(type);
	return /** @type {ICredentialDataDecryptedObject} */ (
		NodeHelpers.getNodeParameters(properties, /** @type {any} */ (data), true, false, null, null)
	);
}

/**
 * The CLI's CredentialsHelper (packages/cli, not installed here) serves credentials from its
 * database; this one from `store`, for what this package's credential needs: no parent types,
 * no OAuth, no preAuthentication (n8n-core then re-sends a thrown 401 once, as on the server),
 * and `authenticate` as a function.
 * @param {CredentialStore} store
 */
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

// Harness node types: a source that emits the test items, and a sink.

const SOURCE_TYPE = 'n8n-nodes-harness.source';
const SINK_TYPE = 'n8n-nodes-base.noOp';
const AGENT_TYPE = 'n8n-nodes-harness.agent';

/**
 * A harness node type: one main output, no parameters.
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

/**
 * Emits a copy of the test's items, like a Code node after the trigger. The items are closed
 * over, not put in parameters, where `=`-prefixed strings would evaluate as expressions.
 * @param {INodeExecutionData[]} items
 */
const createSourceNodeType = (items) =>
	harnessNodeType('source', async () => [structuredClone(items)]);

/**
 * Stands in for an AI Agent or n8n's MCP Server Trigger: asks n8n-core for its connected
 * tools (getInputConnectionData, which wraps a `usableAsTool` node with createNodeAsTool and
 * makeHandleToolInvocation, exactly as for a real agent) and invokes the one tool once per call,
 * in order, or all at once (`parallel`: a model asking for several tool calls in one step, which
 * an agent runs together). Each call becomes one output item: `{ answer }` (the string the tool returned to
 * the model) or `{ thrown }` (the message of the error the tool threw, which an MCP client sees
 * as an `isError` result), each with `toolName` and `toolDescription` (what the model reads).
 * @param {Array<Record<string, unknown>>} calls
 * @param {boolean} [parallel]
 * @returns {INodeType}
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

/**
 * The "<name>Tool" variant the n8n server derives from a `usableAsTool` node (the CLI's
 * convertNodeToAiTool): the same node class, with only an ai_tool output.
 * @param {INodeType} type
 * @returns {INodeType}
 */
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

/**
 * INodeTypes for one workflow: the loaded packages plus the harness nodes.
 * @param {Record<string, INodeType>} extra
 * @returns {INodeTypes}
 */
function createNodeTypes(extra) {
	/** @param {string} name */
	const lookup = (name) => extra[name] ?? nodeRegistry.get(name)?.type;
	return {
		getByName(name) {
			const type = lookup(name);
			if (!type) throw new core.UnrecognizedNodeTypeError(name.split('.')[0], name);
			return type;
		},
		getByNameAndVersion(name, version) {
			const type = lookup(name);
			if (!type) throw new core.UnrecognizedNodeTypeError(name.split('.')[0], name);
			return NodeHelpers.getVersionedNodeType(type, version);
		},
		getKnownTypes() {
			return {};
		},
	};
}

// additionalData (what the CLI's WorkflowExecuteAdditionalData.getBase builds)

/**
 * @param {{ credentialsHelper: any, executionId?: string, workflowId?: string, hooks?: any }} options
 * @returns {import('n8n-workflow').IWorkflowExecuteAdditionalData}
 */
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

// Engine API differences: the only places where the harness follows the
// engine chosen in ./engines.js (everything else is the same API on 1.x and 2.x).

/**
 * WorkflowExecute.run for a full manual run: 2.x takes an options object
 * (ManualExecutionService: `run({ workflow, startNode, ... })`), 1.x positional
 * arguments (n8n 1.123 ManualExecutionService: `run(workflow, startNode, ...)`).
 * @param {any} workflowExecute
 * @param {import('n8n-workflow').Workflow} workflow
 * @param {INode | undefined} startNode
 * @param {import('n8n-workflow').IPinData} [pinData] pinned output per node name (manual runs)
 * @returns {Promise<IRun>}
 */
function startRun(workflowExecute, workflow, startNode, pinData) {
	return engine.major === 1
		? workflowExecute.run(workflow, startNode, undefined, pinData)
		: workflowExecute.run({ workflow, startNode, pinData });
}

/**
 * Executes a built workflow with WorkflowExecute.run, as a manual run does: lifecycle hooks that
 * record the executed nodes in order, the in-memory credentials, and the log lines it emitted.
 * @param {{ workflow: import('n8n-workflow').Workflow, store: CredentialStore,
 *   mode: import('n8n-workflow').WorkflowExecuteMode, startNode: INode | undefined, pinData?: any,
 *   stopWhen?: () => boolean, diesWhen?: () => boolean }} run
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
 * @typedef {object} WaitingWebhookRequest  a request to a waiting execution's resume URL
 * @property {string} url  the full URL, e.g. a link the node put in an email
 * @property {'GET' | 'HEAD' | 'POST'} [method] default 'GET'
 * @property {Record<string, string>} [headers] default: a browser's User-Agent only
 * @property {Record<string, unknown>} [body] the parsed body, as n8n's body parser hands it over
 */

/**
 * @typedef {object} WaitingWebhookAnswer
 * @property {number} status
 * @property {unknown} body             what the person's browser gets
 * @property {boolean} resumed          whether the execution went on
 */

/**
 * Resumes a waiting execution the ways the n8n server does, reimplemented in short: a request to
 * its resume URL (packages/cli/src/webhooks/waiting-webhooks.ts and webhook-helpers.ts: the
 * signature check, the node's restart webhook for the method, its `webhook` method; when that
 * returns `workflowData`, the node is disabled with that data as its input and the execution
 * goes on), or the wait limit passing (the WaitTracker: the execution goes on with the node
 * disabled, its input passing through).
 * @param {{ run: IRun, workflow: import('n8n-workflow').Workflow, additionalData: any,
 *   mode: import('n8n-workflow').WorkflowExecuteMode, executionId: string }} waiting
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
		/** The wait limit passed. */
		passWaitLimit: goOn,
		/**
		 * Retry in n8n's Executions list (packages/cli ExecutionService.retry, both lines): the
		 * failed execution's data as stored (so the node context survives), its error removed and
		 * the failed node's last run dropped, then run on from the node stack, which still holds
		 * the failed node with its input. Each call retries the latest execution.
		 */
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

/**
 * The check n8n's waiting webhooks make of a signed resume URL: the HMAC of its path and query
 * (without `signature`) under the instance's secret.
 * @param {URL} url
 */
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

// runWorkflow

/**
 * @typedef {object} RunWorkflowOptions
 * @property {string} nodeType    full type name, `<package>.<node>`
 * @property {string} [packageDir] load this package first (cached)
 * @property {INodeParameters} [parameters]
 * @property {Array<INodeExecutionData | Record<string, unknown>>} [items]
 *           input items; plain objects are wrapped as `{ json }`. Default: one empty item.
 * @property {Record<string, ICredentialDataDecryptedObject | (() => ICredentialDataDecryptedObject)>} [credentials]
 *           credential data keyed by credential type name; each is attached to the node
 *           as `{ id, name }` and served by the credentials helper (a function: called at each
 *           read, e.g. a Base URL where nothing listens during a node's first try).
 * @property {'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput'} [onError]
 * @property {Array<Record<string, unknown>>} [toolCalls] run the node as an AI tool instead: an
 *   agent calls it once per entry with these arguments (see createAgentNodeType); `toolAnswers`
 *   then holds one `{ answer } | { thrown }` per call.
 * @property {boolean} [parallelToolCalls] the agent makes the tool calls all at once
 * @property {string} [workflowId] default: a new id per run (give one to share n8n's deduplication
 *   store between runs, as one saved workflow does)
 * @property {boolean} [retryOnFail]
 * @property {number} [maxTries]
 * @property {number} [waitBetweenTries]
 * @property {Partial<INode>} [nodeOverrides] merged into the INode of the tested node
 * @property {import('n8n-workflow').IWorkflowSettings} [settings] default `{ executionOrder: 'v1' }`
 * @property {() => boolean} [stopWhen] polled every 2 ms while the execution runs; once it
 *   returns true the execution is stopped as n8n's Stop button does (`cancel()`). The run then
 *   resolves when the node under test returns.
 * @property {() => boolean} [diesWhen] polled likewise; once true, n8n "dies": the execution is
 *   stopped and its calls to the deduplication store write nothing from then on
 */

/**
 * @typedef {object} RunWorkflowResult
 * @property {INodeExecutionData[]} success  items on main output 0 of the tested node
 * @property {INodeExecutionData[]} errors   items on main output 1 (continueErrorOutput only)
 * @property {IRunData} runData              runData of the whole execution
 * @property {any} error                     resultData.error when the execution failed
 * @property {any} nodeError                 the tested node's task error (also set with continueOnFail paths that fail the node)
 * @property {string[]} logs                 log lines n8n emitted during this run
 * @property {string[]} executedNodes        node names in the order nodeExecuteAfter fired
 * @property {IRun} run                      the full IRun
 * @property {import('n8n-workflow').Workflow} workflow
 * @property {INode} node                    the tested node as placed in the workflow
 * @property {Array<Record<string, any>>} toolAnswers  with `toolCalls`: what each call returned or threw
 * @property {Date | undefined} waitTill     set when the execution waits (putExecutionToWait)
 * @property {(request: WaitingWebhookRequest) => Promise<WaitingWebhookAnswer & { result?: any }>} callWebhook
 *   a request to the waiting execution's resume URL, as n8n's waiting webhooks take it; `result`
 *   (this result's shape) when it resumed the execution
 * @property {() => Promise<any>} passWaitLimit  the wait limit passed: the execution goes on
 * @property {() => Promise<any>} retryExecution  Retry of the failed execution, as n8n's
 *   Executions list does it: the result of the retry (this result's shape)
 */

/**
 * Build a real workflow `Source -> Node Under Test -> Success Sink (+ Error Sink)`
 * and execute it with n8n-core's WorkflowExecute.run(), which is what the CLI's
 * ManualExecutionService uses for a full manual run.
 *
 * @param {RunWorkflowOptions} options
 * @returns {Promise<RunWorkflowResult>}
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

	/**
	 * A harness node of the workflow, without parameters.
	 * @param {string} name @param {string} type @param {[number, number]} position
	 * @returns {INode}
	 */
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

// runWorkflowFile: a workflow as exported from the n8n editor

/**
 * A node type of the export that no loaded package has (n8n-nodes-base is not installed): the
 * Manual Trigger emits one empty item, No Operation passes its items on, and any other type must
 * be pinned, since n8n's engine then outputs the pinned data instead of running the node.
 * @param {string} typeName
 * @returns {INodeType}
 */
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
 * @typedef {object} ExportedWorkflow  the JSON the n8n editor exports (Download)
 * @property {string} [id]
 * @property {string} [name]
 * @property {INode[]} nodes
 * @property {IConnections} connections
 * @property {import('n8n-workflow').IWorkflowSettings} [settings]
 * @property {Record<string, unknown[]>} [pinData]
 */

/**
 * Runs an export unchanged as a manual "Execute workflow": every node keeps its parameters,
 * settings (On Error, Retry On Fail, Execute Once, ...) and connections; pinned data (the
 * export's, then `pinData`, by node name; plain objects are items' json) replaces a node's run.
 * Every node of a loaded package is given the credential of `credentials` for each type it
 * declares, whatever the export names. The run starts at the only node no connection leads to.
 * @param {ExportedWorkflow} exported
 * @param {{ packageDir?: string, credentials?: Record<string, ICredentialDataDecryptedObject>,
 *   pinData?: Record<string, unknown[]> }} [options]
 * @returns {Promise<{ outputs: Record<string, INodeExecutionData[][]>, runData: IRunData,
 *   error: any, logs: string[], executedNodes: string[] }>} `outputs`: per node that ran, the
 *   main outputs of its last run (`[]` when it failed)
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

// testCredential

/**
 * The editor's "Test credential", as the CLI's CredentialsTester.testCredentials runs it
 * (packages/cli/src/services/credentials-tester.service.ts, not installed here) for a credential
 * that declares its own `test` request (this package's; not a node's `testedBy`): the credential
 * data with its defaults, the request run through n8n-core's RoutingNode in 'internal' mode on a
 * throw-away node whose only property routes the request. A failure is matched against the `responseCode` rules, else reads
 * `statusText || "Received HTTP status code: N"`, the network error code, or the error's
 * message; a success against the `responseSuccessBody` rules, else "Connection successful!".
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
