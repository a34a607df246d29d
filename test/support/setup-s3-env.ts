// The e2e-s3 project (jest.config.js): the clusters of test/support/cluster.ts keep artifacts and
// traces in a bucket of an S3 server each cluster starts (test/support/s3-server.ts).
process.env.E2E_ARTIFACTS = "s3";
