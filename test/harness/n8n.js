// @ts-check
'use strict';

/**
 * Test harness that runs a community node package inside n8n-core's real
 * execution engine (WorkflowExecute, ExecuteContext, RoutingNode, the real
 * HTTP stack: @n8n/backend-network on 2.x, n8n-core's axios helpers on 1.x),
 * the way an n8n server does it.
 * Nothing about the execution context is mocked: only the pieces the CLI
 * would fetch from its database (credentials, logging sinks) are replaced by
 * small in-memory implementations.
 *
 * The engine (n8n 2.x or the last 1.x) is chosen in ./engines.js; ./resolve.js
 * loads that engine's packages, and the few API differences are in the
 * "Engine API differences" section below.
 *
 * Exported API (see the JSDoc on each function):
 *   loadPackage(packageDir)                     -> LoadedPackage
 *   runWorkflow({ nodeType, parameters, items, credentials, onError, ... })
 *                                               -> { success, errors, runData, error, logs, ...,
 *                                                    waitTill, callWebhook, passWaitLimit }
 *   runWorkflowFile(exportedWorkflowJson, { credentials, pinData, startNode })
 *                                               -> { outputs, runData, error, logs, executedNodes, ... }
 *   testCredential({ credentialType, data })    -> { status: 'OK' | 'Error', message }
 *   getLogs() / clearLogs()                     -> every log line n8n emitted in this module registry
 *   shutdown()                                  -> stop services the engine started (jest-setup.js calls it)
 *
 * Everything n8n-core needs is resolved from n8n-core's own location, because
 * npm installs a second, older copy of several @n8n/* packages at the top of
 * node_modules (e.g. @n8n/di, @n8n/backend-network, @n8n/backend-common). DI
 * tokens are class objects, so configuring the wrong copy silently does
 * nothing.
 *
 * Plain CommonJS on purpose: n8n's community-node lint forbids `process`/`fs`
 * in TypeScript sources.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const { createCredentialsHelper } = require('./credentials-helper');

const { coreRequire, coreHas, coreInternal, engine } = require('./resolve');

const core = coreRequire('n8n-core');
/** @type {typeof import('n8n-workflow')} */
const workflowLib = coreRequire('n8n-workflow');
const { Container } = coreRequire('@n8n/di');
const { Logger } = coreRequire('@n8n/backend-common');
// n8n 2.x sends requests through @n8n/backend-network's OutboundHttp (a DI
// service with SSRF protection); n8n 1.x's request helpers use axios directly.
const { OutboundHttp } = coreHas('@n8n/backend-network')
	? coreRequire('@n8n/backend-network')
	: { OutboundHttp: undefined };

const { Workflow, NodeHelpers, NodeConnectionTypes } = workflowLib;

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
 * @typedef {import('n8n-workflow').IWorkflowExecuteAdditionalData} IWorkflowExecuteAdditionalData
 * @typedef {import('n8n-workflow').INodeCredentialTestResult} INodeCredentialTestResult
 */

/**
 * @typedef {object} LoadedNode
 * @property {string} name          Full n8n type name, `<packageName>.<description.name>`.
 * @property {INodeType | IVersionedNodeType} type   The instance the loader created.
 * @property {import('n8n-workflow').INodeTypeDescription} description  Description of the latest version.
 * @property {string} sourcePath
 * @property {string} packageName
 */

/**
 * @typedef {object} LoadedCredential
 * @property {string} name          Credential type name (credential types are not namespaced).
 * @property {ICredentialType} type
 * @property {string} sourcePath
 * @property {string[]} supportedNodes   Full node type names using this credential.
 * @property {string} packageName
 */

/**
 * @typedef {object} LoadedPackage
 * @property {string} packageName
 * @property {string} directory
 * @property {Record<string, LoadedNode>} nodes               keyed by full type name
 * @property {Record<string, LoadedCredential>} credentials   keyed by credential type name
 * @property {any} loader   the n8n-core PackageDirectoryLoader instance
 */

// ---------------------------------------------------------------------------
// Logging: a real n8n Logger whose winston backend is swapped for a capture.
// ---------------------------------------------------------------------------

/** @type {string[]} */
const logLines = [];

/** JSON.stringify that survives cycles, BigInt and Errors. */
function safeStringify(/** @type {unknown} */ value) {
	const seen = new WeakSet();
	try {
		return JSON.stringify(value, (_key, v) => {
			if (typeof v === 'bigint') return v.toString();
			if (v instanceof Error) {
				return { ...v, name: v.name, message: v.message, stack: v.stack };
			}
			if (v && typeof v === 'object') {
				if (seen.has(v)) return '[Circular]';
				seen.add(v);
			}
			return v;
		});
	} catch {
		return String(value);
	}
}

/**
 * Minimal stand-in for the winston logger n8n's Logger wraps. Each entry is
 * rendered as one line with the message AND all metadata, so a test can
 * assert that a secret does not appear anywhere n8n would have written it.
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
function getLogs() {
	return [...logLines];
}

function clearLogs() {
	logLines.length = 0;
}

// ---------------------------------------------------------------------------
// DI bootstrap (once per module registry, i.e. once per jest test file).
// ---------------------------------------------------------------------------

/** @type {{ logger: any, instanceSettings: any, tmpDir: string } | undefined} */
let services;

function ensureServices() {
	if (services) return services;

	// Shared by all workers/test files: InstanceSettings only writes a tiny
	// `config` file (always the same key) there, so no cleanup is needed.
	const tmpDir = path.join(os.tmpdir(), 'n8n-test-harness');
	fs.mkdirSync(tmpDir, { recursive: true });

	// Real Logger, configured through plain objects so that it neither reads
	// N8N_LOG_* env vars nor writes to the console or ~/.n8n/logs.
	const logger = new Logger(
		/** @type {any} */ ({ logging: { level: 'debug', outputs: [], scopes: [] } }),
		/** @type {any} */ ({ n8nFolder: tmpDir }),
	);
	logger.setInternalLogger(createCaptureBackend());
	Container.set(Logger, logger);
	// The Logger constructor already calls LoggerProxy.init(this); keep it explicit.
	workflowLib.LoggerProxy.init(logger);

	// InstanceSettings would otherwise create/read ~/.n8n/config (encryption key).
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

	// Build the real outbound HTTP client (2.x: SsrfProtectionService + env-driven
	// SsrfProtectionConfig, disabled by default as on a stock n8n; 1.x: nothing to
	// build) and the real ErrorReporter (which, un-initialised, just logs through
	// our Logger).
	if (OutboundHttp) Container.get(OutboundHttp);
	Container.get(core.ErrorReporter);

	// The server's deduplication store (checkProcessedAndRecord & co.) lives in its database;
	// here an in-memory one, per worker, with the same semantics for the "entries" mode.
	void core.DataDeduplicationService.init(createMemoryDeduplicator());

	services = { logger, instanceSettings, tmpDir };
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
 * Executions whose n8n "died" (runWorkflow's `diesWhen`): from then on their store calls write
 * nothing, as if the process were gone; keyed by the execution's own Workflow instance, so the
 * next execution of the same saved workflow (the restarted n8n) is unaffected.
 * @type {WeakSet<object>}
 */
const deadWorkflows = new WeakSet();

/** @param {{ workflow: object }} context */
function assertAlive(context) {
	if (deadWorkflows.has(context.workflow)) throw new Error('n8n died');
}

/**
 * What the n8n server's database-backed deduplicator does in "entries" mode
 * (packages/cli/src/deduplication/deduplication-helper.ts): per workflow and scope ('node'
 * scope: per node id) one row holding a list of values; `checkProcessedAndRecord` splits the
 * given values into those already recorded and new ones (recording the new ones, even when the
 * same value appears twice in one call, as the server does), keeping at most `maxEntries`
 * newest; `removeProcessed` deletes values. Each call reads the row and writes it back.
 */
function createMemoryDeduplicator() {
	/** @type {Map<string, string[]>} */
	const store = new Map();
	/** @param {string} scope @param {{ workflow: { id: string }, node?: { id: string } }} context */
	const keyOf = (scope, context) =>
		`${context.workflow.id}|${scope === 'node' ? `n:${context.node?.id}` : ''}`;
	return {
		/** @param {string[]} items @param {string} scope @param {any} context @param {{ mode: string, maxEntries?: number }} options */
		async checkProcessedAndRecord(items, scope, context, options) {
			if (options.mode !== 'entries') throw new Error('harness deduplicator: entries mode only');
			deduplicationStore.beforeCall(context);
			const key = keyOf(scope, context);
			const recorded = [...(store.get(key) ?? [])];
			// The server reads the row, then writes it back: calls that overlap lose writes there too.
			await new Promise((resolve) => setImmediate(resolve));
			assertAlive(context);
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
			const recorded = [...(store.get(keyOf(scope, context)) ?? [])];
			await new Promise((resolve) => setImmediate(resolve));
			assertAlive(context);
			for (const item of items) {
				const index = recorded.indexOf(String(item));
				if (index !== -1) recorded.splice(index, 1);
			}
			store.set(keyOf(scope, context), recorded);
		},
		/** @param {string} scope @param {any} context */
		async clearAllProcessedItems(scope, context) {
			deduplicationStore.beforeCall(context);
			store.delete(keyOf(scope, context));
		},
		/** @param {string} scope @param {any} context */
		async getProcessedDataCount(scope, context) {
			deduplicationStore.beforeCall(context);
			return (store.get(keyOf(scope, context)) ?? []).length;
		},
	};
}

/**
 * What the CLI's shutdown does for the services the engine starts on first
 * use. n8n 1.x's SSHClientsManager (created with the first ExecuteContext)
 * starts a ref'd 60 s cleanup interval that only its onShutdown() clears
 * (n8n-core-v1/dist/execution-engine/ssh-clients-manager.js:57-58; 2.x unrefs
 * it), so without this jest never exits. test/harness/jest-setup.js calls it
 * after every test file that loaded the harness; safe to call more than once.
 */
function shutdown() {
	const { SSHClientsManager } = coreInternal('dist/execution-engine/ssh-clients-manager');
	if (Container.has(SSHClientsManager)) Container.get(SSHClientsManager).onShutdown();
}
/** @type {any} */ (globalThis)[Symbol.for('n8n-harness.shutdown')] = shutdown;

// ---------------------------------------------------------------------------
// Node / credential registry (what LoadNodesAndCredentials does in the CLI).
// ---------------------------------------------------------------------------

/** @type {Map<string, LoadedPackage>} keyed by realpath of the package directory */
const packagesByDir = new Map();
/** @type {Map<string, LoadedNode>} */
const nodeRegistry = new Map();
/** @type {Map<string, LoadedCredential>} */
const credentialRegistry = new Map();

function latestDescription(/** @type {INodeType | IVersionedNodeType} */ type) {
	if ('nodeVersions' in type) {
		return type.nodeVersions[type.currentVersion].description;
	}
	return type.description;
}

/**
 * Load a built community package from its directory the way the n8n server
 * does: through n8n-core's PackageDirectoryLoader, which runs
 * applySpecialNodeParameters (adds the "Request Options" collection to
 * declarative nodes, polling/CORS params, ...), icon path fixing, codex, and
 * description validation. Cached per directory.
 *
 * @param {string} packageDir directory containing package.json with an `n8n` section
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
	const loaded = { packageName, directory, nodes: {}, credentials: {}, loader };

	for (const [shortName, { type, sourcePath }] of Object.entries(loader.nodeTypes)) {
		const fullName = `${packageName}.${shortName}`;
		const entry = {
			name: fullName,
			type,
			description: latestDescription(type),
			sourcePath: path.join(directory, sourcePath),
			packageName,
		};
		loaded.nodes[fullName] = entry;
		nodeRegistry.set(fullName, entry);
	}

	for (const [name, { type, sourcePath }] of Object.entries(loader.credentialTypes)) {
		const supportedNodes = (loader.known.credentials[name]?.supportedNodes ?? []).map(
			(/** @type {string} */ nodeName) => `${packageName}.${nodeName}`,
		);
		const entry = {
			name,
			type,
			sourcePath: path.join(directory, sourcePath),
			supportedNodes,
			packageName,
		};
		loaded.credentials[name] = entry;
		credentialRegistry.set(name, entry);
	}

	packagesByDir.set(directory, loaded);
	return loaded;
}

/** Registry view handed to the credentials helper. */
const credentialTypes = {
	/** @param {string} name */
	recognizes: (name) => credentialRegistry.has(name),
	/** @param {string} name @returns {ICredentialType} */
	getByName(name) {
		const entry = credentialRegistry.get(name);
		if (!entry) throw new core.UnrecognizedCredentialTypeError(name);
		return entry.type;
	},
	/** @param {string} name @returns {string[]} */
	getSupportedNodes: (name) => credentialRegistry.get(name)?.supportedNodes ?? [],
	/**
	 * The `extends` chain, parents first-level then their parents, as the CLI's
	 * CredentialTypes.getParentTypes returns it.
	 * @param {string} name
	 * @returns {string[]}
	 */
	getParentTypes(name) {
		const direct = credentialRegistry.get(name)?.type.extends ?? [];
		/** @type {string[]} */
		const all = [...direct];
		for (const parent of direct) all.push(...credentialTypes.getParentTypes(parent));
		return all;
	},
};

/**
 * @param {string} typeName
 * @returns {LoadedNode}
 */
function resolveNodeType(typeName) {
	const exact = nodeRegistry.get(typeName);
	if (exact) return exact;
	const byShortName = [...nodeRegistry.values()].filter((n) => n.name.endsWith(`.${typeName}`));
	if (byShortName.length === 1) return byShortName[0];
	throw new Error(
		`Node type "${typeName}" is not loaded. Call loadPackage() first. Loaded: ${[...nodeRegistry.keys()].join(', ') || '(none)'}`,
	);
}

// ---------------------------------------------------------------------------
// Harness node types: a source that emits the test items, and a sink.
// ---------------------------------------------------------------------------

const HARNESS_PACKAGE = 'n8n-nodes-harness';
const SOURCE_TYPE = `${HARNESS_PACKAGE}.source`;
const SINK_TYPE = `${HARNESS_PACKAGE}.sink`;

/**
 * A harness node type's description: "Harness <Name>", one main output, no parameters.
 * @param {string} name @param {string} description @param {string} group
 * @param {import('n8n-workflow').INodeTypeDescription['inputs']} [inputs]
 * @returns {import('n8n-workflow').INodeTypeDescription}
 */
function harnessDescription(name, description, group, inputs = [NodeConnectionTypes.Main]) {
	const displayName = `Harness ${name[0].toUpperCase()}${name.slice(1)}`;
	return {
		displayName,
		name,
		group: [group],
		version: 1,
		description,
		defaults: { name: displayName },
		inputs,
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};
}

/**
 * Emits a deep copy of the given items, like a Code/Edit Fields node right
 * after the manual trigger. One run of a source node = one test run, so the
 * items are closed over instead of being put into parameters (which would
 * make `=`-prefixed strings in test data evaluate as expressions).
 * @param {INodeExecutionData[]} items
 * @returns {INodeType}
 */
function createSourceNodeType(items) {
	return {
		description: harnessDescription('source', 'Emits the test input items', 'input'),
		async execute() {
			return [structuredClone(items)];
		},
	};
}

/** Passes its input through unchanged (a NoOp), so downstream wiring is real. */
/** @type {INodeType} */
const sinkNodeType = {
	description: harnessDescription(
		'sink',
		'Collects the items of one output of the node under test',
		'output',
	),
	async execute() {
		return [this.getInputData()];
	},
};

const AGENT_TYPE = `${HARNESS_PACKAGE}.agent`;

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
	return {
		description: harnessDescription(
			'agent',
			'Calls the connected tool like an agent',
			'transform',
			[NodeConnectionTypes.Main, { type: NodeConnectionTypes.AiTool, displayName: 'Tools' }],
		),
		async execute() {
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
	};
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

// ---------------------------------------------------------------------------
// additionalData (what the CLI's WorkflowExecuteAdditionalData.getBase builds)
// ---------------------------------------------------------------------------

/**
 * @param {{ credentialsHelper: any, executionId?: string, workflowId?: string, hooks?: any, userId?: string }} options
 * @returns {IWorkflowExecuteAdditionalData}
 */
function createAdditionalData({ credentialsHelper, executionId, workflowId, hooks, userId }) {
	const base = 'http://localhost:5678/';
	const unsupported = (/** @type {string} */ what) => async () => {
		throw new workflowLib.UserError(`${what} is not supported by the test harness`);
	};
	return /** @type {IWorkflowExecuteAdditionalData} */ (
		/** @type {unknown} */ ({
			credentialsHelper,
			hooks,
			executionId,
			workflowId,
			userId: userId ?? 'harness-user',
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
		})
	);
}

// ---------------------------------------------------------------------------
// Engine API differences: the only places where the harness follows the
// engine chosen in ./engines.js (everything else is the same API on 1.x and 2.x).
// ---------------------------------------------------------------------------

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
 * @param {{ workflow: import('n8n-workflow').Workflow, workflowId: string, nodes: INode[],
 *   connections: import('n8n-workflow').IConnections, settings: any, store: any,
 *   mode: import('n8n-workflow').WorkflowExecuteMode, startNode: INode | undefined, pinData?: any,
 *   stopWhen?: () => boolean, diesWhen?: () => boolean }} run
 * @returns {Promise<{ run: IRun, executedNodes: string[], logs: string[] }>}
 */
async function executeWorkflow({
	workflow,
	workflowId,
	nodes,
	connections,
	settings,
	store,
	mode,
	startNode,
	pinData,
	stopWhen,
	diesWhen,
}) {
	const executionId = `${Math.floor(Math.random() * 1e9)}`;
	/** @type {string[]} */
	const executedNodes = [];
	const hooks = new core.ExecutionLifecycleHooks(mode, executionId, {
		id: workflowId,
		name: workflow.name,
		active: false,
		isArchived: false,
		nodes,
		connections,
		settings,
		createdAt: new Date(),
		updatedAt: new Date(),
	});
	hooks.addHandler('nodeExecuteAfter', (/** @type {string} */ name) => {
		executedNodes.push(name);
	});
	const credentialsHelper = createCredentialsHelper({ credentialTypes, store });
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

// ---------------------------------------------------------------------------
// Waiting executions: a node that called putExecutionToWait, resumed.
// ---------------------------------------------------------------------------

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
		return { ...describe(run), logs: logLines.slice(logStart) };
	};
	return {
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

// ---------------------------------------------------------------------------
// runWorkflow
// ---------------------------------------------------------------------------

/**
 * @typedef {object} RunWorkflowOptions
 * @property {string} nodeType    full type name (`<package>.<node>`) or unique short name
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
 *   then holds one `{ answer } | { thrown }` per call and `toolRuns` the node's runData.
 * @property {boolean} [parallelToolCalls] the agent makes the tool calls all at once
 * @property {string} [workflowId] default: a new id per run (give one to share n8n's deduplication
 *   store between runs, as one saved workflow does)
 * @property {boolean} [retryOnFail]
 * @property {number} [maxTries]
 * @property {number} [waitBetweenTries]
 * @property {boolean} [alwaysOutputData]
 * @property {boolean} [executeOnce]
 * @property {number} [typeVersion]  default: latest version of the node
 * @property {string} [nodeName]     default: 'Node Under Test'
 * @property {Partial<INode>} [nodeOverrides] merged into the INode of the tested node
 * @property {import('n8n-workflow').IWorkflowSettings} [settings] default `{ executionOrder: 'v1' }`
 * @property {import('n8n-workflow').WorkflowExecuteMode} [mode] default 'manual'
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

	const tested = resolveNodeType(options.nodeType);
	const description = tested.description;
	const asTool = options.toolCalls !== undefined;
	const testedTypeName = asTool ? `${tested.name}Tool` : tested.name;
	const typeVersion =
		options.typeVersion ??
		(Array.isArray(description.version) ? Math.max(...description.version) : description.version);

	const items = (options.items ?? [{ json: {} }]).map((item) =>
		item && typeof item === 'object' && 'json' in item && typeof item.json === 'object'
			? /** @type {INodeExecutionData} */ (item)
			: { json: /** @type {import('n8n-workflow').IDataObject} */ (item) },
	);

	const credentialData = options.credentials ?? {};
	/** @type {Record<string, { id: string, name: string }>} */
	const nodeCredentials = {};
	/** @type {Record<string, { id: string, name: string, type: string, data: ICredentialDataDecryptedObject }>} */
	const store = {};
	Object.entries(credentialData).forEach(([type, data], index) => {
		const id = `harness-cred-${index + 1}`;
		const name = `${type} (harness)`;
		nodeCredentials[type] = { id, name };
		store[id] = { id, name, type, data: typeof data === 'function' ? data : structuredClone(data) };
	});

	const onError = options.onError ?? 'stopWorkflow';
	const nodeName = options.nodeName ?? 'Node Under Test';

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
		name: nodeName,
		type: testedTypeName,
		typeVersion,
		position: [220, 0],
		parameters: structuredClone(options.parameters ?? {}),
		credentials: nodeCredentials,
		onError,
		...(options.retryOnFail !== undefined && { retryOnFail: options.retryOnFail }),
		...(options.maxTries !== undefined && { maxTries: options.maxTries }),
		...(options.waitBetweenTries !== undefined && { waitBetweenTries: options.waitBetweenTries }),
		...(options.alwaysOutputData !== undefined && { alwaysOutputData: options.alwaysOutputData }),
		...(options.executeOnce !== undefined && { executeOnce: options.executeOnce }),
		...options.nodeOverrides,
	};
	const successSink = harnessNode('Success Sink', SINK_TYPE, [440, -100]);
	const errorSink = harnessNode('Error Sink', SINK_TYPE, [440, 100]);
	const agentNode = harnessNode('Harness Agent', AGENT_TYPE, [440, 0]);

	const withErrorOutput = onError === 'continueErrorOutput';
	const nodes = asTool
		? [sourceNode, agentNode, testedNode]
		: [sourceNode, testedNode, successSink, ...(withErrorOutput ? [errorSink] : [])];
	/** @type {import('n8n-workflow').IConnections} */
	const toolConnections = {
		[sourceNode.name]: {
			main: [[{ node: agentNode.name, type: NodeConnectionTypes.Main, index: 0 }]],
		},
		[testedNode.name]: {
			ai_tool: [[{ node: agentNode.name, type: NodeConnectionTypes.AiTool, index: 0 }]],
		},
	};
	/** @type {import('n8n-workflow').IConnections} */
	const connections = asTool
		? toolConnections
		: {
				[sourceNode.name]: {
					main: [[{ node: testedNode.name, type: NodeConnectionTypes.Main, index: 0 }]],
				},
				[testedNode.name]: {
					main: [
						[{ node: successSink.name, type: NodeConnectionTypes.Main, index: 0 }],
						...(withErrorOutput
							? [[{ node: errorSink.name, type: NodeConnectionTypes.Main, index: 0 }]]
							: []),
					],
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
			[SINK_TYPE]: sinkNodeType,
			...(asTool && {
				[AGENT_TYPE]: createAgentNodeType(options.toolCalls ?? [], options.parallelToolCalls),
				[testedTypeName]: toToolNodeType(tested.type),
			}),
		}),
		settings,
	});

	const startNode = workflow.getNode(sourceNode.name) ?? undefined;
	const mode = options.mode ?? 'manual';
	const { run, executedNodes, logs, additionalData, executionId } = await executeWorkflow({
		workflow,
		workflowId,
		nodes,
		connections,
		settings,
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

// ---------------------------------------------------------------------------
// runWorkflowFile: a workflow as exported from the n8n editor
// ---------------------------------------------------------------------------

/** n8n-nodes-base types the harness stands in for (n8n-nodes-base itself is not installed). */
const MANUAL_TRIGGER_TYPE = 'n8n-nodes-base.manualTrigger';
const NO_OP_TYPE = 'n8n-nodes-base.noOp';
const STICKY_NOTE_TYPE = 'n8n-nodes-base.stickyNote';

/**
 * What n8n's Manual Trigger emits in a manual run: one empty item.
 * @type {INodeType}
 */
const manualTriggerNodeType = {
	description: {
		displayName: 'Manual Trigger (harness)',
		name: 'manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Stands in for n8n-nodes-base.manualTrigger: emits one empty item',
		defaults: { name: "When clicking 'Execute workflow'" },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	},
	async execute() {
		return [[{ json: {} }]];
	},
};

/**
 * What n8n's No Operation node does: passes its input through.
 * @type {INodeType}
 */
const noOpNodeType = {
	description: {
		displayName: 'No Operation (harness)',
		name: 'noOp',
		group: ['organization'],
		version: 1,
		description: 'Stands in for n8n-nodes-base.noOp: passes its input through',
		defaults: { name: 'No Operation, do nothing' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	},
	async execute() {
		return [this.getInputData()];
	},
};

/**
 * Any other node type of the export (Code, Edit Fields, a Webhook, a sticky note, ...): known to
 * the workflow so it can be built, but it cannot run; a node of this type must have pinned data,
 * which n8n's engine outputs instead of running the node.
 * @param {string} typeName
 * @returns {INodeType}
 */
function createPinnedOnlyNodeType(typeName) {
	return {
		description: {
			displayName: `${typeName} (pinned data only)`,
			name: typeName.split('.').pop() ?? typeName,
			group: ['transform'],
			version: 1,
			description: `Stands in for ${typeName}, which the harness cannot run`,
			defaults: { name: typeName },
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			properties: [],
		},
		async execute() {
			throw new workflowLib.UserError(
				`Node type "${typeName}" cannot run in the test harness: pin its output (pinData)`,
			);
		},
	};
}

/**
 * @typedef {object} ExportedWorkflow  the JSON the n8n editor exports (Download, or copy the nodes)
 * @property {string} [id]
 * @property {string} [name]
 * @property {INode[]} nodes
 * @property {import('n8n-workflow').IConnections} connections
 * @property {import('n8n-workflow').IWorkflowSettings} [settings]
 * @property {Record<string, Array<INodeExecutionData | Record<string, unknown>>>} [pinData]
 */

/**
 * @typedef {object} RunWorkflowFileOptions
 * @property {string} [packageDir] load this package first (cached)
 * @property {Record<string, ICredentialDataDecryptedObject>} [credentials] credential data keyed
 *   by credential type: every credential of that type the export names (whatever its id and
 *   name) is served with this data; a node of a loaded package that names none gets one.
 * @property {Record<string, Array<INodeExecutionData | Record<string, unknown>>>} [pinData]
 *   merged over the export's own pinData (per node name); plain objects are wrapped as `{ json }`
 * @property {string} [startNode] name of the node the manual run starts from. Default: the only
 *   node no main connection leads to (sticky notes and disabled nodes aside), else the only
 *   such node whose type names a trigger or webhook.
 * @property {import('n8n-workflow').WorkflowExecuteMode} [mode] default 'manual'
 */

/**
 * @typedef {object} RunWorkflowFileResult
 * @property {Record<string, INodeExecutionData[][]>} outputs  per node that ran: the main outputs
 *   of its last run (a node that failed has `[]`)
 * @property {IRunData} runData
 * @property {any} error                     resultData.error when the execution failed
 * @property {string[]} logs                 log lines n8n emitted during this run
 * @property {string[]} executedNodes        node names in the order nodeExecuteAfter fired
 * @property {IRun} run
 * @property {import('n8n-workflow').Workflow} workflow
 */

/**
 * Run a workflow exported from the n8n editor, unchanged, as a manual "Execute workflow" run with
 * n8n-core's WorkflowExecute: every node keeps its exported parameters, settings (On Error, Retry
 * On Fail, Execute Once, ...), credentials and connections; pinned data (the export's and
 * `options.pinData`) replaces a node's run, as in the editor.
 *
 * Node types: those of loaded packages run for real; n8n-nodes-base's Manual Trigger (one empty
 * item) and No Operation (passes items through) have stand-ins; any other type (Code, Edit
 * Fields, Webhook, ...) must be pinned, and an unpinned one is refused before the run.
 *
 * @param {ExportedWorkflow} exported
 * @param {RunWorkflowFileOptions} [options]
 * @returns {Promise<RunWorkflowFileResult>}
 */
async function runWorkflowFile(exported, options = {}) {
	ensureServices();
	if (options.packageDir) await loadPackage(options.packageDir);

	/** @type {INode[]} */
	const nodes = structuredClone(exported.nodes ?? []);
	const connections = structuredClone(exported.connections ?? {});
	/** @type {import('n8n-workflow').IPinData} */
	const pinData = Object.fromEntries(
		Object.entries({ ...exported.pinData, ...options.pinData }).map(([name, items]) => [
			name,
			items.map((item) =>
				item && typeof item === 'object' && 'json' in item && typeof item.json === 'object'
					? /** @type {INodeExecutionData} */ (item)
					: { json: /** @type {import('n8n-workflow').IDataObject} */ (item) },
			),
		]),
	);
	for (const name of Object.keys(pinData)) {
		if (!nodes.some((node) => node.name === name)) {
			throw new Error(`pinData names node "${name}", which the workflow does not have`);
		}
	}

	/** @type {Record<string, INodeType>} */
	const standIns = {};
	for (const node of nodes) {
		if (nodeRegistry.has(node.type) || node.type in standIns) continue;
		if (node.type === MANUAL_TRIGGER_TYPE) standIns[node.type] = manualTriggerNodeType;
		else if (node.type === NO_OP_TYPE) standIns[node.type] = noOpNodeType;
		else standIns[node.type] = createPinnedOnlyNodeType(node.type);
	}
	const connected = new Set(Object.keys(connections));
	for (const byType of Object.values(connections)) {
		for (const outputs of Object.values(byType)) {
			for (const targets of outputs ?? []) {
				for (const target of targets ?? []) connected.add(target.node);
			}
		}
	}
	const unrunnable = nodes.filter(
		(node) =>
			standIns[node.type] !== undefined &&
			node.type !== MANUAL_TRIGGER_TYPE &&
			node.type !== NO_OP_TYPE &&
			node.type !== STICKY_NOTE_TYPE &&
			!node.disabled &&
			connected.has(node.name) &&
			pinData[node.name] === undefined,
	);
	if (unrunnable.length > 0) {
		throw new Error(
			`The harness cannot run ${unrunnable.map((node) => `"${node.name}" (${node.type})`).join(', ')}: ` +
				`pin its output (pinData), or use a type it runs: the loaded packages' nodes, ${MANUAL_TRIGGER_TYPE}, ${NO_OP_TYPE}`,
		);
	}

	// The credentials the export names, bound to the given data by type.
	/** @type {Record<string, { id: string, name: string, type: string, data: ICredentialDataDecryptedObject }>} */
	const store = {};
	for (const node of nodes) {
		const declared = nodeRegistry.get(node.type)?.description.credentials ?? [];
		for (const { name: type } of declared) {
			if (!options.credentials?.[type] || node.credentials?.[type]) continue;
			node.credentials = { ...node.credentials, [type]: { id: null, name: `${type} (harness)` } };
		}
		for (const [type, details] of Object.entries(node.credentials ?? {})) {
			const data = options.credentials?.[type];
			if (!data) continue;
			// An export from an instance that did not share the credential names it without an id.
			details.id ||= `harness-${type}`;
			store[details.id] = {
				id: details.id,
				name: details.name,
				type,
				data: structuredClone(data),
			};
		}
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

	const startNode = workflow.getNode(options.startNode ?? findStartNode(nodes, connections));
	if (!startNode) throw new Error(`The workflow has no node "${options.startNode}" to start from`);

	const { run, executedNodes, logs } = await executeWorkflow({
		workflow,
		workflowId,
		nodes,
		connections,
		settings,
		store,
		mode: options.mode ?? 'manual',
		startNode,
		pinData,
	});

	const runData = run.data.resultData.runData;
	/** @type {Record<string, INodeExecutionData[][]>} */
	const outputs = {};
	for (const [name, tasks] of Object.entries(runData)) {
		outputs[name] = (tasks.at(-1)?.data?.main ?? []).map((items) => items ?? []);
	}
	return {
		outputs,
		runData,
		error: run.data.resultData.error,
		logs,
		executedNodes,
		run,
		workflow,
	};
}

/**
 * The node a manual run of an exported workflow starts from (see RunWorkflowFileOptions.startNode).
 * @param {INode[]} nodes
 * @param {import('n8n-workflow').IConnections} connections
 * @returns {string}
 */
function findStartNode(nodes, connections) {
	const targets = new Set(
		Object.values(connections).flatMap((byType) =>
			(byType.main ?? []).flatMap((targetsOfOutput) =>
				(targetsOfOutput ?? []).map((target) => target.node),
			),
		),
	);
	const roots = nodes.filter(
		(node) => node.type !== STICKY_NOTE_TYPE && !node.disabled && !targets.has(node.name),
	);
	if (roots.length === 1) return roots[0].name;
	const triggers = roots.filter((node) => /trigger|webhook/i.test(node.type));
	if (triggers.length === 1) return triggers[0].name;
	throw new Error(
		`Cannot tell which node the run starts from (${roots.map((node) => `"${node.name}"`).join(', ') || 'none'}): name it (startNode)`,
	);
}

// ---------------------------------------------------------------------------
// testCredential
// ---------------------------------------------------------------------------

/**
 * Run a credential type's test the way the n8n UI "Test credential" button
 * does. Mirrors packages/cli/src/services/credentials-tester.service.ts
 * (CredentialsTester.testCredentials) of n8n-io/n8n, reimplemented here:
 *
 *  - find the test: the credential's own `test` (ICredentialTestRequest), else a
 *    `testedBy` on a node using the credential (string -> methods.credentialTest
 *    function, object -> request);
 *  - apply credential defaults + resolve expressions in the credential data;
 *  - for request tests: a throw-away node type whose only property carries
 *    `routing.request` = the test request, run through n8n-core's RoutingNode
 *    with an ExecuteContext in 'internal' mode and the decrypted credentials;
 *  - on failure: `responseCode` rules are matched against
 *    error.cause.response.status; otherwise non-2xx yields
 *    `statusText || "Received HTTP status code: N"`; network errors yield
 *    error.cause.code; anything else yields error.message;
 *  - on success: `responseSuccessBody` rules are matched with a lodash-style
 *    `get(body, key) === value`; otherwise "Connection successful!".
 *
 * @param {{ credentialType: string, data: ICredentialDataDecryptedObject, packageDir?: string, id?: string, name?: string }} options
 * @returns {Promise<INodeCredentialTestResult>}
 */
async function testCredential({ credentialType, data, packageDir, id, name }) {
	ensureServices();
	if (packageDir) await loadPackage(packageDir);

	const testFunction = findCredentialTest(credentialType);
	if (testFunction === undefined) {
		return { status: 'Error', message: 'No testing function found for this credential.' };
	}

	const credentialId = id ?? 'harness-cred-test';
	const credentialName = name ?? `${credentialType} (harness)`;
	const store = {
		[credentialId]: {
			id: credentialId,
			name: credentialName,
			type: credentialType,
			data: structuredClone(data),
		},
	};
	const credentialsHelper = createCredentialsHelper({ credentialTypes, store });
	const additionalData = createAdditionalData({ credentialsHelper });

	/** @type {import('n8n-workflow').ICredentialsDecrypted} */
	const credentialsDecrypted = {
		id: credentialId,
		name: credentialName,
		type: credentialType,
		data: structuredClone(data),
	};
	try {
		credentialsDecrypted.data = await credentialsHelper.applyDefaultsAndOverwrites(
			additionalData,
			credentialsDecrypted.data ?? {},
			credentialType,
			'internal',
		);
	} catch (error) {
		Container.get(Logger).debug('Credential test failed', /** @type {any} */ (error));
		return { status: 'Error', message: String(/** @type {Error} */ (error).message) };
	}

	if (typeof testFunction === 'function') {
		const context = new core.CredentialTestContext(additionalData);
		return await testFunction.call(context, credentialsDecrypted);
	}

	// The CLI borrows n8n-nodes-base.noOp as the base description; we do not
	// load nodes-base, so an equivalent description is inlined.
	/** @type {INodeType} */
	const baseNodeType = testFunction.nodeType ?? {
		description: {
			displayName: 'No Operation, do nothing',
			name: 'n8n-nodes-base.noOp',
			group: ['organization'],
			version: 1,
			description: 'No Operation',
			defaults: { name: 'No Operation, do nothing' },
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			properties: [],
		},
	};
	const baseVersion = baseNodeType.description.version;
	/** @type {INode} */
	const node = {
		id: 'temp',
		name: 'Temp-Node',
		type: baseNodeType.description.name,
		typeVersion: Array.isArray(baseVersion) ? baseVersion[baseVersion.length - 1] : baseVersion,
		position: [0, 0],
		parameters: {},
		credentials: { [credentialType]: { id: credentialId, name: credentialName } },
	};
	/** @type {INodeType} */
	const testNodeType = {
		description: {
			...baseNodeType.description,
			credentials: [{ name: credentialType, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testFunction.testRequest.request },
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
	/** @type {import('n8n-workflow').IRunExecutionData} */
	const runExecutionData = /** @type {any} */ ({ resultData: { runData: {} } });
	const executeContext = new core.ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		runExecutionData,
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	const routingNode = new core.RoutingNode(executeContext, testNodeType, credentialsDecrypted);

	const rules = testFunction.testRequest.rules;
	/** @type {INodeExecutionData[][] | null | undefined} */
	let response;
	try {
		response = await routingNode.runNode();
	} catch (caught) {
		const error = /** @type {any} */ (caught);
		Container.get(core.ErrorReporter).error(error);
		const httpResponse = error?.cause?.response;
		if (httpResponse) {
			const statusCode = httpResponse.status;
			const statusMessage = httpResponse.statusText;
			for (const rule of Array.isArray(rules) ? rules : []) {
				if (rule.type === 'responseCode' && rule.properties.value === statusCode) {
					return { status: 'Error', message: rule.properties.message };
				}
			}
			if (statusCode < 199 || statusCode > 299) {
				return {
					status: 'Error',
					message: statusMessage || `Received HTTP status code: ${statusCode}`,
				};
			}
		} else if (error?.cause?.code) {
			return { status: 'Error', message: error.cause.code };
		}
		Container.get(Logger).debug('Credential test failed', error);
		return { status: 'Error', message: String(error?.message) };
	}

	for (const rule of Array.isArray(rules) ? rules : []) {
		if (rule.type !== 'responseSuccessBody') continue;
		const body = response?.[0]?.[0]?.json;
		if (getPath(body, rule.properties.key) === rule.properties.value) {
			return { status: 'Error', message: rule.properties.message };
		}
	}
	return { status: 'OK', message: 'Connection successful!' };
}

/**
 * @param {string} credentialType
 * @returns {undefined | ((this: any, c: import('n8n-workflow').ICredentialsDecrypted) => Promise<INodeCredentialTestResult>) | { nodeType?: INodeType, testRequest: import('n8n-workflow').ICredentialTestRequest }}
 */
function findCredentialTest(credentialType) {
	const type = credentialTypes.getByName(credentialType);
	if (type.test) return { testRequest: type.test };

	for (const nodeName of credentialTypes.getSupportedNodes(credentialType)) {
		const loaded = nodeRegistry.get(nodeName);
		if (!loaded) continue;
		const nodeTypeObject = loaded.type;
		/** @type {INodeType[]} */
		const versions =
			'nodeVersions' in nodeTypeObject
				? Object.keys(nodeTypeObject.nodeVersions)
						.sort()
						.reverse()
						.map((v) => nodeTypeObject.nodeVersions[Number(v)])
				: [nodeTypeObject];
		for (const version of versions) {
			for (const { name, testedBy } of version.description.credentials ?? []) {
				if (name !== credentialType || !testedBy) continue;
				if (typeof testedBy === 'string') {
					const fn = version.methods?.credentialTest?.[testedBy];
					if (fn) return fn;
					continue;
				}
				return { nodeType: version, testRequest: testedBy };
			}
		}
	}
	return undefined;
}

/** lodash.get for dotted / bracketed paths. */
function getPath(/** @type {any} */ object, /** @type {string | string[]} */ key) {
	const parts = Array.isArray(key)
		? key
		: String(key)
				.replace(/\[(\w+)\]/g, '.$1')
				.split('.');
	let value = object;
	for (const part of parts) {
		if (value === null || value === undefined) return undefined;
		value = value[part];
	}
	return value;
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
	/** exposed for advanced tests */
	internals: {
		coreRequire,
		engine,
		core,
		workflowLib,
		Container,
		credentialTypes,
		ensureServices,
		createAdditionalData,
		createNodeTypes,
	},
};
