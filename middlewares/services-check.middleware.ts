/**
 * SERVICES names what a process runs. moleculer-runner only warns about a name that matches no
 * file, then starts a node that runs nothing and reports ready (`SERVICES=lables`). Checked here
 * before any service starts: a name that loaded no service stops start-up, naming it.
 */
import type { Middleware, ServiceBroker } from "moleculer";

/** A SERVICES entry as the service it loads: `workers/irc-sender` → `irc-sender` (patterns are not checked). */
export function serviceNameOf(entry: string): string | null {
	if (/[*?{}[\]!]/.test(entry)) return null;
	return entry
		.split("/")
		.pop()!
		.replace(/\.service(\.[jt]s)?$/, "");
}

export function ServicesCheckMiddleware(requested: string[]): Middleware {
	return {
		name: "ServicesCheck",
		// Moleculer's typings want a promise from this hook; a rejected one stops start-up.
		starting(broker: ServiceBroker): Promise<void> {
			const loaded = new Set(broker.services.map(s => s.name).filter(name => !name.startsWith("$")));
			const missing = requested.filter(entry => {
				const name = serviceNameOf(entry);
				return name !== null && !loaded.has(name);
			});
			if (!missing.length) return Promise.resolve();
			const known = [...loaded].join(", ") || "none";
			return Promise.reject(new Error(`SERVICES names ${missing.join(", ")}: no such service (loaded: ${known}). See docs/configuration.md.`));
		},
	};
}
