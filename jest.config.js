// Five projects: unit (pure helpers, no broker), integration (in-process broker, real Redis/NATS
// where a test says so), e2e (separate processes over the real NATS), e2e-mongo: the e2e
// suites of the stored resources again, their processes storing in MongoDB (a FerretDB each
// cluster starts: test/support/cluster.ts), and e2e-s3: the artifacts and trace suites again, on
// an S3 bucket (a versitygw each cluster starts). `npm test` runs all.
/** The e2e suites that run on MongoDB as well: labels, builds (paging, scope), deploy keys, snippets, integrations and push. */
const MONGO_E2E = ["resources/labels", "resources/builds", "resources/deploy-keys", "resources/snippets", "push/push-workers"].map(
	name => `<rootDir>/test/e2e/${name}.spec.ts`,
);
/** The artifacts and trace suites, run on an S3 bucket as well: builds (traces, artifacts, erase), the 1 GiB transfer, v4 job artifacts through a real client. */
const S3_E2E = ["resources/builds", "resources/artifacts-transfer", "clients/gitbeaker"].map(name => `<rootDir>/test/e2e/${name}.spec.ts`);
const base = {
	preset: "ts-jest",
	testEnvironment: "node",
	// Type-checking is `npm run typecheck`; ts-jest only transpiles (isolatedModules in tsconfig.json).
	transform: { "^.+\\.ts$": ["ts-jest", {}] },
};
module.exports = {
	testTimeout: 60000,
	globalSetup: "<rootDir>/test/support/global-setup.js",
	globalTeardown: "<rootDir>/test/support/global-teardown.js",
	projects: [
		{ ...base, displayName: "unit", testMatch: ["<rootDir>/test/unit/**/*.spec.ts"] },
		{ ...base, displayName: "integration", testMatch: ["<rootDir>/test/integration/**/*.spec.ts"], setupFiles: ["<rootDir>/test/support/setup-env.ts"] },
		{ ...base, displayName: "e2e", testMatch: ["<rootDir>/test/e2e/**/*.spec.ts"], setupFiles: ["<rootDir>/test/support/setup-env.ts"] },
		{
			...base,
			displayName: "e2e-mongo",
			testMatch: MONGO_E2E,
			setupFiles: ["<rootDir>/test/support/setup-env.ts", "<rootDir>/test/support/setup-mongo-env.ts"],
		},
		{
			...base,
			displayName: "e2e-s3",
			testMatch: S3_E2E,
			setupFiles: ["<rootDir>/test/support/setup-env.ts", "<rootDir>/test/support/setup-s3-env.ts"],
		},
	],
};
