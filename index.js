// n8n loads the files named in package.json's "n8n" section; this entry point exports the same
// classes for code that requires the package directly.
module.exports = {
	BasicsEngage: require('./dist/nodes/BasicsEngage/BasicsEngage.node.js').BasicsEngage,
	BasicsEngageApi: require('./dist/credentials/BasicsEngageApi.credentials.js').BasicsEngageApi,
};
