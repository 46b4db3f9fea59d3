// The package's contents for code that requires it rather than loading it as n8n does: the
// files n8n loads (the same paths as package.json's "n8n" section, which a test checks) and
// the classes in them. n8n itself reads only package.json.
const path = require('node:path');

const nodes = ['dist/nodes/BasicsEngage/BasicsEngage.node.js'];
const credentials = ['dist/credentials/BasicsEngageApi.credentials.js'];

module.exports = {
	n8n: { nodes, credentials },
	/** Absolute paths, for tools that load the files themselves (a test harness, a linter). */
	files: [...nodes, ...credentials].map((file) => path.join(__dirname, file)),
	get BasicsEngage() {
		return require(`./${nodes[0]}`).BasicsEngage;
	},
	get BasicsEngageApi() {
		return require(`./${credentials[0]}`).BasicsEngageApi;
	},
};
