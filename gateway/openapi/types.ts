/**
 * What the OpenAPI document is built from (gateway/openapi/openapi.ts), in one file the document's
 * parts all import, so none of them imports the document itself.
 */
import type { ParamGroup } from "../../lib/api/param-groups";

/** What the document needs of an action definition (as the registry holds it). */
export interface ActionDefinition {
	params?: Record<string, unknown>;
	/** "none": no token needed; "optional": a token when there is one (public projects). */
	auth?: string;
	/** The least access level the action needs, where the action declares one. */
	access?: number;
	/** Relations between its parameters (lib/api/param-groups.ts). */
	paramGroups?: readonly ParamGroup[];
}

export interface OpenApiOptions {
	/** Where the gateway mounts its routes: "/api/v3". */
	basePath: string;
	/** The action behind a name, or undefined when no node of the cluster offers it now. */
	action: (name: string) => ActionDefinition | undefined;
	/** Requests per minute and token (0: no rate limit, and no 429). */
	rateLimitPerMinute: number;
	title?: string;
}

/** How a kind of route table is mounted by the gateway (services/api.service.ts). */
export interface Mount {
	prefix: string;
	security: "token" | "secret" | "none";
	body: "parsed" | "text" | "stream" | "none";
}
