// After the last test file: stops the servers global-setup.js started (test/support/test-servers.js).
module.exports = async function globalTeardown() {
	await globalThis.__testServers?.stop();
};
