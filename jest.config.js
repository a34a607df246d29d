// Three projects: unit (pure helpers, no broker), integration (in-process broker, real Redis/NATS
// where a test says so) and e2e (separate processes over the real NATS). `npm test` runs all.
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
	],
};
