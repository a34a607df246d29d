/**
 * Installs the cache's resilience on whatever cacher the broker ended up with (CACHER from the
 * environment replaces a configured one): bounded key sizes, write generations
 * (lib/cache/write-generations.ts), and on Redis the resilient cacher (lib/cache/resilient-cacher.ts)
 * with its clean relay (lib/cache/clean-relay.ts). Why: docs/architecture.md#resilient-cache.
 */
import type { Middleware, Service, ServiceBroker, ServiceSchema } from "moleculer";
import { CleanRelay } from "../lib/cache/clean-relay";
import { makeCacherResilient, type CacherLike, type ResilientCacher } from "../lib/cache/resilient-cacher";
import { installWriteGenerations } from "../lib/cache/write-generations";

/** Cache keys longer than this end in a hash of their parameters: a key's size never follows a client's input. */
const MAX_CACHE_KEY_PARAMS = 256;

/** Each broker's relay, for the gateway's service to subscribe to as it is created, and its resilient cacher. */
const installed = new WeakMap<ServiceBroker, { relay: CleanRelay; resilient: ResilientCacher }>();

export function ResilientCacheMiddleware(): Middleware {
	return {
		name: "ResilientCache",
		created(broker: ServiceBroker) {
			const cacher = broker.cacher as unknown as CacherLike | undefined;
			if (!cacher) return;
			cacher.opts.maxParamsLength ??= MAX_CACHE_KEY_PARAMS;
			installWriteGenerations(cacher);
			const relay = new CleanRelay(broker);
			const resilient = makeCacherResilient(broker.getLogger("cache"), cacher, relay);
			if (resilient) installed.set(broker, { relay: relay.servedBy((patterns, keys) => resilient.cleanForPeer(patterns, keys)), resilient });
		},
		serviceCreating(service: Service, schema: ServiceSchema) {
			installed.get(service.broker)?.relay.subscribe(schema);
		},
		stopping(broker: ServiceBroker) {
			installed.get(broker)?.resilient.stop();
		},
	} as unknown as Middleware;
}
