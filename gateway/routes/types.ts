import type { JsonSchema } from "../../presenters/json-schema";
import type { AliasFunction } from "../server/routing";
import type { Answers } from "./answers";

/**
 * What an alias points at: an action name (`"labels.list"`, `"stream:builds.x"`), or an alias
 * function (gateway/files/file-download.ts, gateway/files/artifact-upload.ts).
 */
export type AliasTarget = string | AliasFunction;

/** One resource's HTTP aliases ("METHOD /path" → action), as the gateway mounts them. */
export interface RouteTable {
	/** Under the version's root (/api/v3, /api/v4), authenticated by private token (actions may declare `auth: "optional"`). */
	api?: Record<string, AliasTarget>;
	/** Under /api/v3/internal, authorised by Gitlab-Shared-Secret; JSON and text bodies. */
	internal?: Record<string, string>;
	/** Under /api/v3/internal with no body parser: alias functions that read the raw body themselves, `stream:` aliases. */
	internalStream?: Record<string, AliasTarget>;
	/** Under each version's root, no token, no body: the API's own description (gateway/openapi/docs.routes.ts). */
	docs?: Record<string, AliasTarget>;
	/**
	 * What the aliases above answer, by the same "METHOD /path" (gateway/routes/answers.ts): every
	 * alias that calls an action declares its success here; an alias function describes itself.
	 */
	answers?: Record<string, Answers>;
	/**
	 * What an alias whose action reads its input itself takes, by the same "METHOD /path": the JSON
	 * Schema of its body (without one, of its query), declared beside the code that reads it.
	 */
	takes?: Record<string, JsonSchema>;
	/**
	 * An alias whose input depends on the value of one of its path parameters (an integration's PUT:
	 * its fields), by the same "METHOD /path": for each value, what it takes then. The document
	 * describes each value's own operation at its literal path, beside the alias's.
	 */
	variants?: Record<string, { param: string; takes: Record<string, JsonSchema> }>;
}

/** The kinds of routes a table mounts. */
export type RouteKind = Exclude<keyof RouteTable, "answers" | "takes" | "variants">;
