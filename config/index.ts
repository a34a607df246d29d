/**
 * The one place that reads the environment. Every setting is parsed once, typed, given its
 * default, and a bad value stops start-up with a message that names the variable.
 */
import { bool, bytes, cidrList, ConfigError, type Env, fraction, int, list, mongoUri, oneOf, resourceAttributes, str, url } from "./parse";
import { dataDirOf } from "./data-dir";
import { artifactStorage, S3_SECRET_SETTINGS } from "./artifacts";
import { redisSettings, REDIS_SECRET_SETTINGS } from "./redis";

export { ConfigError } from "./parse";

/** OpenTelemetry's standard trace samplers (OTEL_TRACES_SAMPLER), docs/operations.md#traces. */
export const TRACE_SAMPLERS = [
	"always_on",
	"always_off",
	"traceidratio",
	"parentbased_always_on",
	"parentbased_always_off",
	"parentbased_traceidratio",
] as const;

/**
 * Traces (docs/operations.md#traces), from the standard OTEL_* variables: exported over OTLP/HTTP
 * when an endpoint is set (and the SDK is not disabled), nothing otherwise.
 */
function tracing(env: Env) {
	const endpoint = url(env, "OTEL_EXPORTER_OTLP_ENDPOINT", ["http", "https"]);
	const tracesEndpoint = url(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ["http", "https"]);
	const disabled = bool(env, "OTEL_SDK_DISABLED", false);
	return {
		/** Where spans go (empty: tracing off); the base endpoint gets the signal's path, as the specification says. */
		tracesUrl: disabled ? "" : tracesEndpoint || (endpoint ? `${endpoint.replace(/\/+$/, "")}/v1/traces` : ""),
		sampler: oneOf(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, "parentbased_always_on"),
		samplerRatio: fraction(env, "OTEL_TRACES_SAMPLER_ARG", 1),
		/** Empty: named after the services the process runs. */
		serviceName: str(env, "OTEL_SERVICE_NAME"),
		resourceAttributes: resourceAttributes(env, "OTEL_RESOURCE_ATTRIBUTES"),
	};
}

/** A command that prints an INTERNAL_API_SECRET long enough that guessing it is infeasible. */
export const INTERNAL_SECRET_COMMAND = `node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`;
export const MIN_INTERNAL_SECRET_LENGTH = 32;

/** The settings the Secret carries. */
const SECRET_SETTINGS = [
	"SECRETS_KEY",
	"INTERNAL_API_SECRET",
	"GITLAB_ROOT_PASSWORD",
	"GITLAB_ROOT_TOKEN",
	"MONGO_URI",
	"SMTP_URL",
	...S3_SECRET_SETTINGS,
	...REDIS_SECRET_SETTINGS,
];

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;

/** The Secret template's placeholders (k8s/base/config/secret.yaml) never run as a known value. */
function rejectPlaceholders(env: Env): void {
	for (const name of SECRET_SETTINGS)
		if (/^change-?me$/i.test(str(env, name).trim())) throw new ConfigError(name, "CHANGE-ME", "a value of your own, not the template's placeholder");
}

/** The secrets and the root account, checked before the settings that follow them are read. */
function secrets(env: Env, transporter: string) {
	const secretsKey = str(env, "SECRETS_KEY");
	if (secretsKey && Buffer.byteLength(secretsKey) < 16) throw new ConfigError("SECRETS_KEY", "<hidden>", "at least 16 characters");
	// Every node must read what another encrypted: a generated per-node key would not do.
	if (transporter && !secretsKey) throw new ConfigError("SECRETS_KEY", "", "a key shared by every node whenever TRANSPORTER is set");
	const rootToken = str(env, "GITLAB_ROOT_TOKEN");
	if (rootToken && !/^[A-Za-z0-9_-]{20}$/.test(rootToken)) throw new ConfigError("GITLAB_ROOT_TOKEN", "<hidden>", "20 characters of [A-Za-z0-9_-]");
	const internalApiSecret = str(env, "INTERNAL_API_SECRET");
	const rootPassword = str(env, "GITLAB_ROOT_PASSWORD");
	if (rootPassword && rootPassword.length < 8) throw new ConfigError("GITLAB_ROOT_PASSWORD", "<hidden>", "at least 8 characters");
	return {
		rootPassword,
		rootToken,
		internalApiSecret,
		/**
		 * Long enough that guessing it is infeasible: its holder is never refused for others' wrong
		 * guesses from the same address. A shorter one still starts (warned about at start-up) and is
		 * guarded by refusing an address that guessed wrong too often (docs/api.md#internal).
		 */
		internalApiSecretStrong: internalApiSecret.length >= MIN_INTERNAL_SECRET_LENGTH,
		secretsKey,
	};
}

/**
 * SERVICES entries under a service's former name, mapped to its name now: `keys` was the deploy-keys
 * service's, and a deployment's environment that still says so keeps working (docs/configuration.md).
 */
const FORMER_SERVICE_NAMES = new Map([["keys", "deploy-keys"]]);

/** SERVICES, former names mapped (`keys`, `keys.service`, `keys.service.js` are the deploy-keys service's). */
function serviceList(env: Env): string[] {
	return list(env, "SERVICES").map(entry => {
		const name = entry.split(".")[0];
		const now = FORMER_SERVICE_NAMES.get(name);
		return now ? now + entry.slice(name.length) : entry;
	});
}

/** Ports and which processes run (the transporter is read earlier: the secrets' check needs it). */
function processes(env: Env, transporter: string) {
	return {
		env: str(env, "NODE_ENV", "development"),
		port: int(env, "PORT", 3000, 0, 65535),
		healthPort: int(env, "HEALTH_PORT", 3001, 0, 65535),
		metricsPort: int(env, "METRICS_PORT", 3030, 0, 65535),
		/** Empty: every service in one process, no transporter. */
		transporter,
		namespace: str(env, "NAMESPACE"),
		nodeID: str(env, "NODE_ID") || undefined,
		/** What moleculer-runner loads (empty: everything); checked against what it loaded (middlewares/services-check.middleware.ts). */
		services: serviceList(env),
	};
}

/** Where data lives: the cacher, Redis, MongoDB, the data directory, artifacts and the durable channels. */
function storage(env: Env, cacher: string, dataDir: string) {
	return {
		/** Empty: in-memory cacher (or, with REDIS_SENTINELS, Redis through Sentinel). `redis://…`: the Redis cacher shared by every node. */
		cacher,
		/** The Redis of the cache (with Sentinel) and of the rate limiter (the cacher's by default, or REDIS_URL); null: none. */
		...redisSettings(env, cacher),
		mongoUri: mongoUri(env, "MONGO_URI"),
		dataDir,
		...artifactStorage(env, dataDir),
		/** Durable channel adapter: empty means JetStream on the NATS transporter, or in-process without one. */
		channels: url(env, "CHANNELS", ["nats", "redis", "rediss"]),
	};
}

/** How the service names itself to the outside: its mail sender and the base of its links. */
function addresses(env: Env) {
	return {
		smtpUrl: url(env, "SMTP_URL", ["smtp", "smtps"]),
		mailFrom: str(env, "MAIL_FROM", "gitlab@localhost"),
		gitlabUrl: url(env, "GITLAB_URL", ["http", "https"], "http://localhost").replace(/\/+$/, ""),
		/** GITLAB_URL was given: links (pagination) use it instead of the request's Host. */
		gitlabUrlSet: !!str(env, "GITLAB_URL"),
	};
}

/** The push channel and the workers behind it: their outbound calls, windows, caches and retries. */
function push(env: Env) {
	return {
		taskTrackerApiUrl: url(env, "TASK_TRACKER_API_URL", ["http", "https"], "https://app.asana.com/api/1.0").replace(/\/+$/, ""),
		allowLocalRequests: bool(env, "ALLOW_LOCAL_REQUESTS", false),
		/**
		 * Push channel: messages a worker group handles at once (JetStream max_ack_pending, set when the
		 * consumer is created). Sized from bench 5: a window is rate × time per event (docs/architecture.md#push-window).
		 */
		pushMaxInFlight: int(env, "PUSH_MAX_IN_FLIGHT", 32, 1, 10000),
		/** Workers: how long a worker keeps a project's integration settings (0: read them for every event); a change is announced at once. */
		pushSettingsCacheTtlMs: int(env, "PUSH_SETTINGS_CACHE_TTL_MS", 30000, 0, 3600000),
		/** Workers: projects whose settings one worker keeps at most (least recently used go first). */
		pushSettingsCacheMaxEntries: int(env, "PUSH_SETTINGS_CACHE_MAX_ENTRIES", 10000, 1, 1000000),
		/** Push mailer: SMTP connections kept open to SMTP_URL (each sends one mail at a time; mails beyond wait in the pool). */
		smtpPoolSize: int(env, "SMTP_POOL_SIZE", 16, 1, 100),
		/** Push channel: deliveries of one event to one worker group before it is dead-lettered. */
		pushMaxDeliveries: int(env, "PUSH_MAX_DELIVERIES", 6, 1, 1000),
		/** Push channel: first retry delay; each next one is 4x longer, at most 60 s. */
		pushRetryDelayMs: int(env, "PUSH_RETRY_DELAY_MS", 2000, 0, 3600000),
		/** Push channel: copies of the JetStream streams in a NATS cluster (set when they are created). */
		pushStreamReplicas: int(env, "PUSH_STREAM_REPLICAS", 1, 1, 5),
		/** Push channel: how long a crashed worker's message waits before another replica gets it. */
		pushAckWaitMs: int(env, "PUSH_ACK_WAIT_MS", 15000, 1000, 3600000),
		/** Workers' outbound HTTP, SMTP and IRC: connect and response time limit. */
		outboundTimeoutMs: int(env, "OUTBOUND_TIMEOUT_MS", 10000, 100, 600000),
		ircNick: str(env, "IRC_NICK", "gitlab"),
		/** Pause between two IRC lines on one connection (flood protection). */
		ircMessageIntervalMs: int(env, "IRC_MESSAGE_INTERVAL_MS", 1000, 0, 60000),
	};
}

/** The edge's limits: rates, connections, timeouts and body sizes (docs/configuration.md). */
function edgeLimits(env: Env) {
	return {
		rateLimitPerMinute: int(env, "RATE_LIMIT_PER_MINUTE", 2000),
		/** Proxies whose X-Forwarded-For is believed (the Ingress); nobody's by default. */
		trustedProxies: cidrList(env, "TRUSTED_PROXIES"),
		/** Failed logins per client address a minute (and in a row per account), and wrong internal secrets per address a minute, before 429. */
		authFailureLimit: int(env, "AUTH_FAILURE_LIMIT", 10, 1, 10000),
		/** Password hashes computed at once per process (each takes a core for ~40 ms); more wait in a short queue. */
		passwordHashConcurrency: int(env, "PASSWORD_HASH_CONCURRENCY", 1, 1, 64),
		/** Password hashes allowed to wait; beyond that a login or user creation answers 429 at once. */
		passwordHashQueue: int(env, "PASSWORD_HASH_QUEUE", 32, 0, 10000),
		/** Open client connections one gateway process accepts; more are closed at once. */
		maxConnections: int(env, "MAX_CONNECTIONS", 10000, 1, 1000000),
		/** A client must send its request headers within this time. */
		headersTimeoutMs: int(env, "HEADERS_TIMEOUT_MS", 10000, 1000, 600000),
		/** A connection on which nothing moves for this long is closed (slow bodies, stalled readers). */
		idleTimeoutMs: int(env, "IDLE_TIMEOUT_MS", 30000, 1000, 3600000),
		/** A request body read into memory (JSON, forms, trace chunks) must have arrived within this time. */
		bodyTimeoutMs: int(env, "BODY_TIMEOUT_MS", 60000, 1000, 3600000),
		/** Entries the in-memory cache keeps at most (least recently used go first). */
		cacheMaxEntries: int(env, "CACHE_MAX_ENTRIES", 10000, 100, 10000000),
		maxBodyBytes: bytes(env, "MAX_BODY_BYTES", 1024 * 1024),
		/** Largest artifacts upload accepted by the internal API (streamed, never buffered). */
		maxArtifactBytes: bytes(env, "MAX_ARTIFACT_BYTES", 2 * 1024 ** 3),
		requestTimeoutMs: int(env, "REQUEST_TIMEOUT_MS", 10000, 100),
		shutdownTimeoutMs: int(env, "SHUTDOWN_TIMEOUT_MS", 10000, 0),
	};
}

export function loadConfig(env: Env = process.env) {
	// Read in this order so that the first bad setting named is the same as it always was.
	rejectPlaceholders(env);
	const dataDir = dataDirOf(env);
	const cacher = url(env, "CACHER", ["redis", "rediss"]);
	const transporter = url(env, "TRANSPORTER", ["nats", "redis", "rediss", "tcp"]);
	const secretSettings = secrets(env, transporter);
	return {
		...processes(env, transporter),
		...storage(env, cacher, dataDir),
		...addresses(env),
		...secretSettings,
		...push(env),
		...edgeLimits(env),
		logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
		logFormat: oneOf(env, "LOG_FORMAT", ["json", "text"] as const, "json"),
		tracing: tracing(env),
	};
}

export type Config = ReturnType<typeof loadConfig>;

/** Parsed once per process. */
export const config: Config = loadConfig();
