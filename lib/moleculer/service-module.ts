/**
 * A service's module as one of its mixins. Each service's parts (services/modules/<service>/, one
 * per resource and version, and the shared mixins/) are typed against the whole service's `this`
 * (its collections, its stores, every part's methods), so a handler's `this.x` is checked.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";

export function serviceModule<S = ServiceSettingSchema, M = Record<string, unknown>, V = Record<string, unknown>>(
	module: Partial<ServiceSchema<S, M, V>>,
): Partial<ServiceSchema> {
	// Moleculer types `mixins` with its default `this`, which a typed `this` is not assignable to; the object is the same.
	return module as unknown as Partial<ServiceSchema>;
}
