/**
 * Gives every action its own copy of its declaration (parameter schema, cache keys, access level)
 * when its service is created.
 *
 * Why: the gateway reads actions' declarations from the service registry (to validate parameters
 * at the edge, gateway/edge/edge-validation.ts), and Moleculer's registry, when it describes a node to
 * the others, drops any object it has already met in that description: its circular-reference
 * guard does not tell a cycle from a shared value. A declaration shared by reference (PAGE_PARAMS
 * spread into several actions, one rule object used for two fields) then reaches the other nodes
 * with holes. Copies share nothing, so every declaration arrives whole.
 */
import type { Middleware, ServiceSchema } from "moleculer";

/** A deep copy of plain data; functions, RegExps and class instances are kept as they are. */
export function copyPlain<T>(value: T): T {
	if (Array.isArray(value)) return value.map(copyPlain) as T;
	if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype)
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyPlain(v)])) as T;
	return value;
}

export function ActionSchemasMiddleware(): Middleware {
	return {
		name: "ActionSchemas",
		serviceCreating(_service: unknown, schema: ServiceSchema) {
			const actions = schema.actions ?? {};
			for (const [name, action] of Object.entries(actions)) if (action && typeof action === "object") actions[name] = copyPlain(action);
		},
	};
}
