import { execFileSync } from "child_process";
import { ConfigError, INTERNAL_SECRET_COMMAND, loadConfig } from "../../../config";

describe("loadConfig", () => {
	it("has working defaults with an empty environment", () => {
		const c = loadConfig({});
		expect(c).toMatchObject({
			port: 3000,
			healthPort: 3001,
			metricsPort: 3030,
			transporter: "",
			cacher: "",
			mongoUri: "",
			rateLimitPerMinute: 2000,
			allowLocalRequests: false,
			maxBodyBytes: 1024 * 1024,
			logLevel: "info",
		});
		expect(c.dataDir).toMatch(/data$/);
	});

	it("reads SERVICES, the deploy-keys service's former name `keys` as its name now", () => {
		expect(loadConfig({}).services).toEqual([]);
		expect(loadConfig({ SERVICES: "api, labels,workers/irc-sender" }).services).toEqual(["api", "labels", "workers/irc-sender"]);
		expect(loadConfig({ SERVICES: "keys" }).services).toEqual(["deploy-keys"]);
		expect(loadConfig({ SERVICES: "accounts,keys.service,keys.service.js,deploy-keys" }).services).toEqual([
			"accounts",
			"deploy-keys.service",
			"deploy-keys.service.js",
			"deploy-keys",
		]);
		// Only the name itself: another service or worker that merely contains it stays as it is.
		expect(loadConfig({ SERVICES: "keysmith,workers/keys,constructor" }).services).toEqual(["keysmith", "workers/keys", "constructor"]);
	});

	it("parses the cluster settings", () => {
		const c = loadConfig({
			TRANSPORTER: "nats://nats:4222",
			SECRETS_KEY: "a-shared-cluster-key",
			CACHER: "redis://redis:6379",
			MONGO_URI: "mongodb://mongo/gitlab",
			RATE_LIMIT_PER_MINUTE: "0",
			MAX_BODY_BYTES: "2mb",
			ALLOW_LOCAL_REQUESTS: "true",
		});
		expect(c).toMatchObject({
			transporter: "nats://nats:4222",
			cacher: "redis://redis:6379",
			redis: { url: "redis://redis:6379" },
			mongoUri: "mongodb://mongo/gitlab",
			rateLimitPerMinute: 0,
			maxBodyBytes: 2 * 1024 * 1024,
			allowLocalRequests: true,
		});
	});

	it("takes every node of a NATS cluster, and the channel, its provisioning and the delivery records get all of them", async () => {
		const urls = "nats://nats-0.nats:4222,nats://nats-1.nats:4222,nats://nats-2.nats:4222";
		const c = loadConfig({ TRANSPORTER: urls, SECRETS_KEY: "a-shared-cluster-key", PUSH_STREAM_REPLICAS: "3" });
		expect([c.transporter, c.pushStreamReplicas]).toEqual([urls, 3]);
		const { channelBackend, natsConnectionOptions } = await import("../../../lib/push/channel");
		expect(channelBackend(c)).toEqual({ kind: "nats", url: urls });
		// What the channel adapter, the provisioning and the delivery records connect with.
		expect(natsConnectionOptions(urls).servers).toEqual(["nats-0.nats:4222", "nats-1.nats:4222", "nats-2.nats:4222"]);
		expect(() => loadConfig({ TRANSPORTER: "nats://a:4222,bogus", SECRETS_KEY: "a-shared-cluster-key" })).toThrow(/TRANSPORTER/);
	});

	it("requires a shared SECRETS_KEY in a cluster", () => {
		expect(() => loadConfig({ TRANSPORTER: "nats://nats:4222" })).toThrow(
			'Invalid configuration: SECRETS_KEY="" (expected a key shared by every node whenever TRANSPORTER is set)',
		);
	});

	it.each([
		["TRANSPORTER", "foo", /TRANSPORTER="foo" \(expected a URL with scheme nats or redis or rediss or tcp\)/],
		["CACHER", "memcached://x", /CACHER/],
		["PORT", "http", /PORT="http" \(expected an integer from 0 to 65535\)/],
		["PORT", "70000", /PORT/],
		["ALLOW_LOCAL_REQUESTS", "maybe", /ALLOW_LOCAL_REQUESTS="maybe" \(expected true or false\)/],
		["LOG_LEVEL", "loud", /LOG_LEVEL/],
		["MAX_BODY_BYTES", "1 parsec", /MAX_BODY_BYTES/],
		["GITLAB_ROOT_TOKEN", "short", /GITLAB_ROOT_TOKEN="<hidden>"/],
	])("refuses %s=%s with a clear message", (name, value, message) => {
		expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
		expect(() => loadConfig({ [name]: value })).toThrow(message);
	});

	it("refuses the Secret template's placeholders, whichever secret they stand in", () => {
		for (const name of ["SECRETS_KEY", "INTERNAL_API_SECRET", "GITLAB_ROOT_PASSWORD", "GITLAB_ROOT_TOKEN", "MONGO_URI", "SMTP_URL"])
			expect(() => loadConfig({ [name]: "CHANGE-ME" })).toThrow(
				`Invalid configuration: ${name}="CHANGE-ME" (expected a value of your own, not the template's placeholder)`,
			);
		expect(loadConfig({ INTERNAL_API_SECRET: "changed-by-me-0123456789abcdef012" }).internalApiSecret).toBe("changed-by-me-0123456789abcdef012");
	});

	it("tells an INTERNAL_API_SECRET short enough to guess from a long one, and the command makes a long one", () => {
		const short = "x".repeat(31);
		expect(loadConfig({ INTERNAL_API_SECRET: short })).toMatchObject({ internalApiSecret: short, internalApiSecretStrong: false });
		expect(loadConfig({ INTERNAL_API_SECRET: "x".repeat(32) }).internalApiSecretStrong).toBe(true);
		const generated = execFileSync("sh", ["-c", INTERNAL_SECRET_COMMAND], { encoding: "utf8" }).trim();
		expect(generated).toMatch(/^[0-9a-f]{64}$/);
		expect(loadConfig({ INTERNAL_API_SECRET: generated })).toMatchObject({ internalApiSecret: generated, internalApiSecretStrong: true });
		expect(loadConfig({}).internalApiSecret).toBe("");
	});

	it("never repeats the credentials of a URL it refuses", () => {
		for (const [name, value] of [
			["SMTP_URL", "smpt://gitlab:S3cretPw@mail.example.com:587"],
			["CACHER", "redis//:S3cretPw@redis:6379"],
			["TRANSPORTER", "nats://u:S3cretPw@a:4222,bogus"],
		]) {
			const err = (() => {
				try {
					loadConfig({ SECRETS_KEY: "0123456789abcdef", [name]: value });
				} catch (e) {
					return e as Error;
				}
			})();
			expect([name, err?.name, err?.message.includes("S3cretPw")]).toEqual([name, "ConfigError", false]);
		}
	});

	it("takes a TLS Redis (rediss://) for the channel and the transporter", () => {
		const cfg = loadConfig({
			TRANSPORTER: "rediss://:pw@redis.example.com:6380",
			CHANNELS: "rediss://:pw@redis.example.com:6380",
			SECRETS_KEY: "0123456789abcdef",
		});
		expect([cfg.transporter, cfg.channels]).toEqual(["rediss://:pw@redis.example.com:6380", "rediss://:pw@redis.example.com:6380"]);
	});
});

describe("tracing (the standard OTEL_* variables)", () => {
	it("is off without an endpoint, or with the SDK disabled", () => {
		expect(loadConfig({}).tracing).toEqual({
			tracesUrl: "",
			sampler: "parentbased_always_on",
			samplerRatio: 1,
			serviceName: "",
			resourceAttributes: {},
		});
		expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }).tracing.tracesUrl).toBe("");
	});

	it("sends traces to the endpoint's /v1/traces, or to the traces endpoint as given", () => {
		expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing.tracesUrl).toBe("http://collector:4318/v1/traces");
		expect(
			loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/otlp" }).tracing
				.tracesUrl,
		).toBe("https://traces.example.com/otlp");
	});

	it("parses the sampler, its ratio, the service name and the resource attributes", () => {
		const t = loadConfig({
			OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
			OTEL_TRACES_SAMPLER_ARG: "0.01",
			OTEL_SERVICE_NAME: "edge",
			OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=production, team=ops%20one",
		}).tracing;
		expect(t).toMatchObject({ sampler: "parentbased_traceidratio", samplerRatio: 0.01, serviceName: "edge" });
		expect(t.resourceAttributes).toEqual({ "deployment.environment": "production", team: "ops one" });
	});

	it.each([
		["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" \(expected a URL with scheme http or https\)/],
		["OTEL_TRACES_SAMPLER", "sometimes", /OTEL_TRACES_SAMPLER="sometimes" \(expected one of always_on, always_off/],
		["OTEL_TRACES_SAMPLER_ARG", "1.5", /OTEL_TRACES_SAMPLER_ARG="1.5" \(expected a number from 0 to 1\)/],
		["OTEL_TRACES_SAMPLER_ARG", "-0.1", /expected a number from 0 to 1/],
		["OTEL_RESOURCE_ATTRIBUTES", "novalue", /OTEL_RESOURCE_ATTRIBUTES="novalue" \(expected key=value pairs, comma-separated\)/],
		["OTEL_RESOURCE_ATTRIBUTES", "a=%zz", /expected key=value pairs/],
		["OTEL_SDK_DISABLED", "maybe", /OTEL_SDK_DISABLED="maybe" \(expected true or false\)/],
	])("refuses %s=%s", (name, value, message) => {
		expect(() => loadConfig({ [name]: value })).toThrow(message);
	});
});

describe("loadConfig: artifacts in a bucket (docs/configuration.md#artifacts)", () => {
	it("keeps files under DATA_DIR by default, and reads the bucket's settings with either store", () => {
		const c = loadConfig({ DATA_DIR: "/srv/gitlab" });
		expect([c.artifactStore, c.artifactsDir, c.s3.bucket, c.s3.proxyDownload]).toEqual(["filesystem", "/srv/gitlab/artifacts", "", true]);
		expect(() => loadConfig({ ARTIFACTS_S3_REGION: "", ARTIFACTS_S3_BUCKET: "Not_A_Bucket" })).toThrow(/ARTIFACTS_S3_BUCKET="Not_A_Bucket"/);
	});

	it("parses an S3 store: endpoint, path style with an endpoint, the prefix ending in a slash, redirected downloads", () => {
		const c = loadConfig({
			ARTIFACTS_STORE: "s3",
			ARTIFACTS_S3_ENDPOINT: "https://s3.example.com/",
			ARTIFACTS_S3_BUCKET: "gitlab-artifacts",
			ARTIFACTS_S3_PREFIX: "/deploy-a",
			ARTIFACTS_S3_ACCESS_KEY_ID: "AKIA0123",
			ARTIFACTS_S3_SECRET_ACCESS_KEY: "secret",
			ARTIFACTS_S3_PROXY_DOWNLOAD: "false",
		});
		expect(c.artifactStore).toBe("s3");
		expect(c.s3).toEqual({
			endpoint: "https://s3.example.com",
			region: "us-east-1",
			bucket: "gitlab-artifacts",
			prefix: "deploy-a/",
			accessKeyId: "AKIA0123",
			secretAccessKey: "secret",
			forcePathStyle: true,
			proxyDownload: false,
			publicEndpoint: "",
		});
		// AWS itself: virtual-hosted addressing, the SDK's own credentials.
		expect(loadConfig({ ARTIFACTS_STORE: "s3", ARTIFACTS_S3_BUCKET: "gitlab-artifacts" }).s3).toMatchObject({
			endpoint: "",
			forcePathStyle: false,
			accessKeyId: "",
		});
	});

	it.each([
		[{ ARTIFACTS_STORE: "s3" }, 'ARTIFACTS_S3_BUCKET="" (expected a bucket name whenever ARTIFACTS_STORE=s3)'],
		[{ ARTIFACTS_STORE: "gcs" }, 'ARTIFACTS_STORE="gcs" (expected one of filesystem, s3)'],
		[{ ARTIFACTS_S3_ENDPOINT: "https://key:secret@s3.example.com" }, 'ARTIFACTS_S3_ENDPOINT="<hidden>" (expected a URL without credentials'],
		[{ ARTIFACTS_S3_ENDPOINT: "s3.example.com" }, "ARTIFACTS_S3_ENDPOINT"],
		[{ ARTIFACTS_S3_ACCESS_KEY_ID: "AKIA0123" }, 'ARTIFACTS_S3_SECRET_ACCESS_KEY="" (expected set together with its pair, or both left empty)'],
		[{ ARTIFACTS_S3_PREFIX: "a/../b" }, 'ARTIFACTS_S3_PREFIX="a/../b"'],
		[{ ARTIFACTS_S3_PROXY_DOWNLOAD: "sometimes" }, "ARTIFACTS_S3_PROXY_DOWNLOAD"],
		[{ ARTIFACTS_S3_SECRET_ACCESS_KEY: "CHANGE-ME", ARTIFACTS_S3_ACCESS_KEY_ID: "x" }, "the template's placeholder"],
	])("refuses %j", (env, message) => {
		expect(() => loadConfig(env)).toThrow(message);
	});
});

describe("loadConfig: Redis through Sentinel (docs/configuration.md#redis)", () => {
	it("names one Redis by its URL, for the cache and the limiter, as before", () => {
		expect(loadConfig({ CACHER: "redis://redis:6379" }).redis).toEqual({ url: "redis://redis:6379" });
		expect(loadConfig({ REDIS_URL: "rediss://limits:6380" }).redis).toEqual({ url: "rediss://limits:6380" });
		expect(loadConfig({}).redis).toBeNull();
	});

	it("or the primary the Sentinels watch, with the passwords", () => {
		const c = loadConfig({
			REDIS_SENTINELS: "sentinel-0:26379, sentinel-1, [fd00::7]:26380",
			REDIS_SENTINEL_NAME: "gitlab-cache",
			REDIS_PASSWORD: "pw",
			REDIS_SENTINEL_PASSWORD: "spw",
		});
		expect(c.redis).toEqual({
			sentinels: [
				{ host: "sentinel-0", port: 26379 },
				{ host: "sentinel-1", port: 26379 },
				{ host: "fd00::7", port: 26380 },
			],
			name: "gitlab-cache",
			password: "pw",
			sentinelPassword: "spw",
		});
		expect(c.cacher).toBe("");
	});

	it.each([
		[{ REDIS_SENTINELS: "s:26379" }, 'REDIS_SENTINEL_NAME="" (expected the name the Sentinels monitor the primary under'],
		[{ REDIS_SENTINELS: "s:99999", REDIS_SENTINEL_NAME: "m" }, "REDIS_SENTINELS"],
		[{ REDIS_SENTINELS: "redis://s:26379", REDIS_SENTINEL_NAME: "m" }, "REDIS_SENTINELS"],
		[
			{ REDIS_SENTINELS: "s", REDIS_SENTINEL_NAME: "m", CACHER: "redis://:pw@redis:6379" },
			'CACHER="redis://<credentials>@redis:6379" (expected empty when REDIS_SENTINELS is set',
		],
		[{ REDIS_SENTINELS: "s", REDIS_SENTINEL_NAME: "m", REDIS_URL: "redis://redis:6379" }, "REDIS_URL"],
	])("refuses %j", (env, message) => {
		expect(() => loadConfig(env)).toThrow(message);
	});
});
