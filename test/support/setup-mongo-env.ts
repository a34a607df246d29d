// The e2e-mongo project (jest.config.js): the clusters of test/support/cluster.ts store in MongoDB
// (MONGO_URI), on a wire-protocol server each cluster starts (test/support/mongo-server.ts).
process.env.E2E_STORE = "mongo";
