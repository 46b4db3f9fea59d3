// @ts-check
'use strict';

/**
 * In-memory ICredentialsHelper for the test harness.
 *
 * Behaves like the CLI's CredentialsHelper (packages/cli/src/credentials-helper.ts
 * in n8n-io/n8n) minus the database: credentials come from a plain object
 * store instead of the credentials repository, there are no overwrites,
 * external secrets or dynamic credentials. What nodes can observe is the same:
 *
 *  - getDecrypted: stored data + credential-type defaults (NodeHelpers.getNodeParameters
 *    over the credential properties, which also drops unknown keys), then
 *    expressions in the credential data are resolved (against the running
 *    workflow/item when the engine passes expressionResolveValues, otherwise
 *    against a throw-away workflow, as the CLI does);
 *  - authenticate: function-valued `authenticate` is called; generic
 *    `{ type: 'generic', properties: { headers|qs|body|auth: {...} } }` has keys
 *    and values resolved as expressions with `$credentials` and is merged into
 *    the request options;
 *  - preAuthentication: returns undefined unless the credential type has a
 *    preAuthentication function AND a hidden `typeOptions.expirable` property
 *    (then it refreshes when empty/expired/under test, like the CLI);
 *  - getParentTypes: the `extends` chain; getCredentialsProperties: the type's
 *    properties merged over its parents' (when those are loaded).
 */

const { coreRequire } = require('./resolve');
const core = coreRequire('n8n-core');
/** @type {typeof import('n8n-workflow')} */
const workflowLib = coreRequire('n8n-workflow');

const { ICredentialsHelper, NodeHelpers, Workflow, UnexpectedError, UserError, isExpression } =
	workflowLib;

/**
 * @typedef {import('n8n-workflow').ICredentialDataDecryptedObject} ICredentialDataDecryptedObject
 * @typedef {import('n8n-workflow').ICredentialType} ICredentialType
 * @typedef {import('n8n-workflow').INode} INode
 * @typedef {import('n8n-workflow').INodeProperties} INodeProperties
 * @typedef {import('n8n-workflow').INodeParameters} INodeParameters
 * @typedef {import('n8n-workflow').IHttpRequestOptions} IHttpRequestOptions
 * @typedef {import('n8n-workflow').INodeCredentialsDetails} INodeCredentialsDetails
 * @typedef {import('n8n-workflow').WorkflowExecuteMode} WorkflowExecuteMode
 */

/**
 * @typedef {object} CredentialTypeRegistry
 * @property {(name: string) => boolean} recognizes
 * @property {(name: string) => ICredentialType} getByName
 * @property {(name: string) => string[]} getParentTypes
 * @property {(name: string) => string[]} getSupportedNodes
 */

/**
 * @typedef {Record<string, { id: string, name: string, type: string, data: ICredentialDataDecryptedObject }>} CredentialStore
 */

/** Node used to resolve credential expressions outside of a workflow run. */
const mockNode = /** @type {INode} */ ({
	id: 'harness-credential-mock',
	name: '',
	typeVersion: 1,
	type: 'mock',
	position: [0, 0],
	parameters: {},
});

const mockNodeTypes = /** @type {import('n8n-workflow').INodeTypes} */ ({
	getByName: () => /** @type {any} */ ({ description: { properties: [] } }),
	getByNameAndVersion: () => /** @type {any} */ ({ description: { properties: [] } }),
	getKnownTypes: () => ({}),
});

class HarnessCredentialsHelper extends ICredentialsHelper {
	/**
	 * @param {CredentialTypeRegistry} credentialTypes
	 * @param {CredentialStore} store  keyed by credential id
	 */
	constructor(credentialTypes, store) {
		super();
		this.credentialTypes = credentialTypes;
		this.store = store;
	}

	/**
	 * @param {INodeCredentialsDetails} nodeCredentials
	 * @param {string} type
	 */
	findStored(nodeCredentials, type) {
		if (!nodeCredentials?.id) {
			throw new UserError(
				`Credential "${nodeCredentials?.name}" of type "${type}" has no ID. Set credentials on the node.`,
			);
		}
		const stored = this.store[nodeCredentials.id];
		if (!stored || stored.type !== type) {
			// Same wording as the CLI's CredentialNotFoundError.
			throw new UserError(
				`Credential with ID "${nodeCredentials.id}" does not exist for type "${type}".`,
			);
		}
		return stored;
	}

	/** @param {string} name */
	getParentTypes(name) {
		return this.credentialTypes.getParentTypes(name);
	}

	/**
	 * @param {string} credentialType
	 * @param {string} nodeType
	 */
	isCredentialUsableByNode(credentialType, nodeType) {
		/** @type {ICredentialType} */
		let typeDef;
		try {
			typeDef = this.credentialTypes.getByName(credentialType);
		} catch {
			return true;
		}
		if (!(/** @type {any} */ (typeDef).restrictToSupportedNodes)) return true;
		return this.credentialTypes.getSupportedNodes(credentialType).includes(nodeType);
	}

	/**
	 * @param {ICredentialDataDecryptedObject} credentials
	 * @param {string} typeName
	 * @param {IHttpRequestOptions | import('n8n-workflow').IRequestOptionsSimplified} requestOptions
	 * @param {import('n8n-workflow').Workflow} [workflow]
	 * @param {INode} [node]
	 * @returns {Promise<IHttpRequestOptions>}
	 */
	async authenticate(credentials, typeName, requestOptions, workflow, node) {
		const { authenticate } = this.credentialTypes.getByName(typeName);
		if (!authenticate) return /** @type {IHttpRequestOptions} */ (requestOptions);

		if (typeof authenticate === 'function') {
			return await authenticate(credentials, /** @type {IHttpRequestOptions} */ (requestOptions));
		}

		if (typeof authenticate === 'object') {
			if (!workflow || !node) {
				throw new UnexpectedError(
					'Workflow and node are required for declarative credential authentication',
				);
			}
			/** @type {Record<string, any>} */
			const target = requestOptions;
			target.headers ??= {};
			if (authenticate.type === 'generic') {
				for (const [section, entries] of Object.entries(authenticate.properties)) {
					for (const [rawKey, rawValue] of Object.entries(entries ?? {})) {
						const key = this.resolveAuthValue(rawKey, credentials, workflow, node);
						const value = this.resolveAuthValue(rawValue, credentials, workflow, node);
						target[section] ??= {};
						target[section][key] = value;
					}
				}
			}
		}
		return /** @type {IHttpRequestOptions} */ (requestOptions);
	}

	/**
	 * Resolve one `authenticate.properties` key/value; non-expressions pass
	 * through, a falsy result becomes '' and everything else a string.
	 * @param {any} value
	 * @param {ICredentialDataDecryptedObject} credentials
	 * @param {import('n8n-workflow').Workflow} workflow
	 * @param {INode} node
	 */
	resolveAuthValue(value, credentials, workflow, node) {
		if (!isExpression(value)) return value;
		const resolved = workflow.expression.getSimpleParameterValue(
			node,
			value,
			'internal',
			{ $credentials: credentials },
			undefined,
			'',
		);
		return resolved ? resolved.toString() : '';
	}

	/**
	 * @param {import('n8n-workflow').IHttpRequestHelper} helpers
	 * @param {ICredentialDataDecryptedObject} credentials
	 * @param {string} typeName
	 * @param {INode} node
	 * @param {boolean} credentialsExpired
	 * @returns {Promise<ICredentialDataDecryptedObject | undefined>}
	 */
	async preAuthentication(helpers, credentials, typeName, node, credentialsExpired) {
		const credentialType = this.credentialTypes.getByName(typeName);
		const expirable = credentialType.properties.find(
			(p) => p.type === 'hidden' && p.typeOptions?.expirable === true,
		);
		if (expirable?.name === undefined) return undefined;
		if (typeof credentialType.preAuthentication !== 'function') return undefined;

		const isTestingCredentials =
			node?.parameters?.temp === '' && node?.type === 'n8n-nodes-base.noOp';
		if (credentials[expirable.name] !== '' && !credentialsExpired && !isTestingCredentials) {
			return undefined;
		}

		const output = await credentialType.preAuthentication.call(helpers, credentials);
		if (output?.[expirable.name] === undefined) return undefined;

		const nodeCredentials = node.credentials?.[credentialType.name];
		if (nodeCredentials) {
			const stored = this.findStored(nodeCredentials, credentialType.name);
			/** @type {ICredentialDataDecryptedObject} */
			const dataToPersist = { ...stored.data };
			for (const [key, value] of Object.entries(
				/** @type {ICredentialDataDecryptedObject} */ (output),
			)) {
				if (key === expirable.name || !isExpression(stored.data[key])) dataToPersist[key] = value;
			}
			await this.updateCredentials(nodeCredentials, credentialType.name, dataToPersist);
			return Object.assign(credentials, output);
		}
		return undefined;
	}

	/**
	 * @param {import('n8n-workflow').IHttpRequestHelper} helpers
	 * @param {ICredentialDataDecryptedObject} credentials
	 * @param {string} typeName
	 */
	async runPreAuthentication(helpers, credentials, typeName) {
		const credentialType = this.credentialTypes.getByName(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		const output = await credentialType.preAuthentication.call(helpers, credentials);
		return /** @type {ICredentialDataDecryptedObject | undefined} */ (output ?? undefined);
	}

	/**
	 * @param {INodeCredentialsDetails} nodeCredentials
	 * @param {string} type
	 */
	async getCredentials(nodeCredentials, type) {
		const stored = this.findStored(nodeCredentials, type);
		const credentials = new core.Credentials({ id: stored.id, name: stored.name }, type);
		await credentials.setData(structuredClone(stored.data));
		return credentials;
	}

	/**
	 * @param {import('n8n-workflow').IWorkflowExecuteAdditionalData} additionalData
	 * @param {INodeCredentialsDetails} nodeCredentials
	 * @param {string} type
	 * @param {WorkflowExecuteMode} mode
	 * @param {import('n8n-workflow').IExecuteData} [executeData]
	 * @param {boolean} [raw]
	 * @param {import('n8n-workflow').ICredentialsExpressionResolveValues} [expressionResolveValues]
	 */
	async getDecrypted(
		additionalData,
		nodeCredentials,
		type,
		mode,
		executeData,
		raw,
		expressionResolveValues,
	) {
		const stored = this.findStored(nodeCredentials, type);
		// A test's credential may change between reads (each try of a node reads it again).
		const data = structuredClone(typeof stored.data === 'function' ? stored.data() : stored.data);
		if (raw === true) return data;
		return await this.applyDefaultsAndOverwrites(
			additionalData,
			data,
			type,
			mode,
			executeData,
			expressionResolveValues,
		);
	}

	/**
	 * Credential defaults + expression resolution (no overwrites in tests).
	 * @param {import('n8n-workflow').IWorkflowExecuteAdditionalData} additionalData
	 * @param {ICredentialDataDecryptedObject} original
	 * @param {string} type
	 * @param {WorkflowExecuteMode} mode
	 * @param {import('n8n-workflow').IExecuteData} [executeData]
	 * @param {import('n8n-workflow').ICredentialsExpressionResolveValues} [expressionResolveValues]
	 * @returns {Promise<ICredentialDataDecryptedObject>}
	 */
	async applyDefaultsAndOverwrites(
		additionalData,
		original,
		type,
		mode,
		executeData,
		expressionResolveValues,
	) {
		const properties = this.getCredentialsProperties(type);
		let data = /** @type {ICredentialDataDecryptedObject} */ (
			NodeHelpers.getNodeParameters(
				properties,
				/** @type {INodeParameters} */ ({ ...original }),
				true,
				false,
				null,
				null,
			)
		);
		for (const passthrough of ['oauthTokenData', 'allowedHttpRequestDomains', 'allowedDomains']) {
			if (data[passthrough] === undefined && original[passthrough] !== undefined) {
				data[passthrough] = original[passthrough];
			}
		}

		const additionalKeys = core.getAdditionalKeys(additionalData, mode, null, {
			isCredential: true,
		});

		if (expressionResolveValues) {
			const erv = expressionResolveValues;
			try {
				data = /** @type {ICredentialDataDecryptedObject} */ (
					erv.workflow.expression.getParameterValue(
						/** @type {INodeParameters} */ (data),
						erv.runExecutionData,
						erv.runIndex,
						erv.itemIndex,
						erv.node.name,
						erv.connectionInputData,
						mode,
						additionalKeys,
						executeData,
						false,
						data,
					)
				);
			} catch (e) {
				/** @type {Error} */ (e).message += ' [Error resolving credentials]';
				throw e;
			}
		} else {
			const workflow = new Workflow({
				nodes: [mockNode],
				connections: {},
				active: false,
				nodeTypes: mockNodeTypes,
			});
			data = /** @type {ICredentialDataDecryptedObject} */ (
				workflow.expression.getComplexParameterValue(
					mockNode,
					/** @type {INodeParameters} */ (data),
					mode,
					additionalKeys,
					undefined,
					undefined,
					data,
				)
			);
		}
		return data;
	}

	/**
	 * @param {INodeCredentialsDetails} nodeCredentials
	 * @param {string} type
	 * @param {ICredentialDataDecryptedObject} data
	 */
	async updateCredentials(nodeCredentials, type, data) {
		const stored = this.findStored(nodeCredentials, type);
		stored.data = structuredClone(data);
	}

	/**
	 * @param {INodeCredentialsDetails} nodeCredentials
	 * @param {string} type
	 * @param {ICredentialDataDecryptedObject} data
	 */
	async updateCredentialsOauthTokenData(nodeCredentials, type, data) {
		const stored = this.findStored(nodeCredentials, type);
		stored.data = { ...stored.data, oauthTokenData: structuredClone(data.oauthTokenData) };
	}

	/**
	 * @param {string} type
	 * @returns {INodeProperties[]}
	 */
	getCredentialsProperties(type) {
		const credentialType = this.credentialTypes.getByName(type);
		if (!credentialType.extends?.length) return credentialType.properties;

		/** @type {INodeProperties[]} */
		const combined = [];
		for (const parent of credentialType.extends) {
			if (!this.credentialTypes.recognizes(parent)) continue; // e.g. oAuth2Api from nodes-base
			NodeHelpers.mergeNodeProperties(combined, this.getCredentialsProperties(parent));
		}
		NodeHelpers.mergeNodeProperties(combined, credentialType.properties);
		return combined;
	}
}

/**
 * @param {{ credentialTypes: CredentialTypeRegistry, store: CredentialStore }} options
 */
function createCredentialsHelper({ credentialTypes, store }) {
	return new HarnessCredentialsHelper(credentialTypes, store);
}

module.exports = { createCredentialsHelper, HarnessCredentialsHelper };
