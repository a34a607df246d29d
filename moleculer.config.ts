/**
 * Broker options, built from config/ (the one place that reads the environment).
 *
 * moleculer-runner re-applies environment variables named like top-level options
 * (TRANSPORTER, CACHER, NAMESPACE) after loading this file; config/ has validated the same
 * variables first, so a bad value stops start-up with a clear message and good ones agree.
 */
import { ServiceBroker, type BrokerOptions, type MetricRegistry } from "moleculer";
import { config } from "./config";
import { cacherOption } from "./lib/cache/redis-connection";
import { createValidator } from "./lib/api/validator";
import { printStartBanner } from "./lib/start/banner";
import { ActionSchemasMiddleware } from "./middlewares/action-schemas.middleware";
import { ChannelsMiddlewares } from "./middlewares/channels.middleware";
import { CoalescedSendsMiddleware } from "./middlewares/coalesced-sends.middleware";
import { HealthMiddleware } from "./middlewares/health.middleware";
import { HedgedCallsMiddleware } from "./middlewares/hedged-calls.middleware";
import { NodeLivenessMiddleware } from "./middlewares/node-liveness.middleware";
import { RequestMetricsMiddleware } from "./middlewares/request-metrics.middleware";
import { ResilientCacheMiddleware } from "./middlewares/resilient-cache.middleware";
import { ServicesCheckMiddleware } from "./middlewares/services-check.middleware";
import { TracingMiddleware } from "./middlewares/tracing.middleware";
import { logFormatter } from "./lib/tracing/log-format";

// moleculer-runner reads SERVICES itself, after loading this file: it loads what config/ made of it
// (a service's former name, such as `keys`, mapped to its name now).
if (config.services.length) process.env.SERVICES = config.services.join(",");

/** How long a hedged call waits for its answer before sending the request once more (far above a normal answer). */
const HEDGE_AFTER_MS = 1000;

/** Probes; its readiness part goes last in the middlewares (ready once every one has started). */
const health = HealthMiddleware(config.healthPort);

const brokerConfig: BrokerOptions = {
	namespace: config.namespace,
	nodeID: config.nodeID,
	logger: {
		type: "Console",
		// Moleculer's "json" and "short" lines, with the correlation id of the request or delivery (lib/tracing/log-format.ts).
		options: { formatter: logFormatter(config.logFormat), colors: config.logFormat !== "json", moduleColors: false, objectPrinter: null },
	},
	logLevel: config.logLevel,
	transporter: (config.transporter || null) as BrokerOptions["transporter"],
	// Redis (CACHER, or through Sentinel), else in memory: bounded (least recently used entries go first), so no client can grow it without end.
	cacher: cacherOption(config.redis, config.cacher, config.cacheMaxEntries) as BrokerOptions["cacher"],
	// JSONExt carries Buffers as base64: 3x faster streams than JSON, and no oversized NATS packets.
	serializer: "JSONExt",
	transit: { maxChunkSize: 64 * 1024 },
	requestTimeout: config.requestTimeoutMs,
	retryPolicy: { enabled: false },
	registry: { strategy: "RoundRobin", preferLocal: true },
	heartbeatInterval: 5,
	heartbeatTimeout: 15,
	// SIGTERM: stop taking requests, let in-flight ones finish (up to the timeout), exit 0.
	tracking: { enabled: true, shutdownTimeout: config.shutdownTimeoutMs },
	// Lengths in characters, numbers from decimal text: as the API description says (lib/api/validator.ts).
	validator: createValidator(),
	metrics: {
		enabled: true,
		reporter: {
			type: "Prometheus",
			options: {
				port: config.metricsPort,
				path: "/metrics",
				defaultLabels: (registry: MetricRegistry) => ({ namespace: registry.broker.namespace, nodeID: registry.broker.nodeID }),
			},
		},
	},
	// The durable `push` channel: JetStream, Redis Streams or in-process, from config (see the middleware).
	// ActionSchemas: each action's declaration reaches other nodes whole (see the middleware).
	// ResilientCache: a Redis outage degrades the cache (bounded, logged, replayed) instead of failing requests.
	// HedgedCalls: a read (or a push) whose request was lost with a NATS node is sent again after a second.
	// NodeLiveness: a known node's INFO counts as a heartbeat (a node restarted in place is not dropped).
	// CoalescedSends: what a turn of the event loop sends leaves in one write to NATS.
	// Then Moleculer's internal middlewares, in their order, with request metrics that measure the
	// gateway's HTTP entry point cheaply (see the middleware). Health's readiness last: ready once all have started.
	internalMiddlewares: false,
	middlewares: [
		ServicesCheckMiddleware(config.services),
		health,
		ActionSchemasMiddleware(),
		ResilientCacheMiddleware(),
		...ChannelsMiddlewares(config),
		HedgedCallsMiddleware(Math.min(HEDGE_AFTER_MS, Math.floor(config.requestTimeoutMs / 2))),
		NodeLivenessMiddleware(),
		CoalescedSendsMiddleware(),
		// Traces and correlation ids: outside the hedged calls (a copy carries the trace) and the channel retries.
		TracingMiddleware(config),
		...ServiceBroker.INTERNAL_MIDDLEWARES.map(name => (name === "Metrics" ? RequestMetricsMiddleware() : name)),
		health.readiness,
	],
	// `npm start` (every service here, no transporter) says where it serves and, on its first start, root's token.
	started: broker => {
		if (!config.transporter) printStartBanner(broker, !!config.internalApiSecret);
	},
};

export default brokerConfig;
