// moleculer-web augments ActionSchema with `rest` only when it is part of the compilation.
import "moleculer-web";

declare module "moleculer" {
	interface ActionSchema {
		/** Gateway authentication: default required; "optional" lets anonymous callers through; "none" ignores tokens. */
		auth?: "required" | "optional" | "none";
		/**
		 * The project access level the action needs (`/projects/:id/…` routes): the gateway refuses a
		 * caller below it (403) before the call and before any cache is read. NONE: whoever may read
		 * the project. Rules that depend on the record (a snippet's visibility) stay in the handler.
		 */
		access?: import("../lib/accounts/access").AccessLevelValue;
		/**
		 * Grape's relations between its parameters (`exactly_one_of`, `at_least_one_of`,
		 * `mutually_exclusive`), which its handler checks (lib/api/param-groups.ts) and the API
		 * description states.
		 */
		paramGroups?: readonly import("../lib/api/param-groups").ParamGroup[];
		/** Safe to run twice: a remote call of it is sent again when the first goes unanswered (middlewares/hedged-calls.middleware.ts). */
		hedge?: boolean;
	}
	interface ActionCacheOptions {
		/** Stores an answer only when its parameters are in their one cached spelling (lib/cache/write-generations.ts). */
		storedIf?: (params: Record<string, unknown>) => boolean;
	}
	interface ServiceSchema {
		/** @moleculer/channels 0.1.8 ships no types. */
		channels?: Record<string, unknown>;
	}
	interface ServiceBroker {
		sendToChannel(channel: string, payload: unknown, opts?: Record<string, unknown>): Promise<void>;
	}
}
