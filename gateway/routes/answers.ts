/**
 * What a route answers, declared in its table beside its alias (`answers`), for the API
 * description (gateway/openapi/openapi.ts, docs/architecture.md#the-api-document): the success with its
 * body's schema (the presenter's, presenters/json-schema.ts), and refusals particular to the route
 * beyond those every route of its kind may give.
 */
import type { JsonSchema } from "../../presenters/json-schema";

/** A success's body: JSON of `schema`, unless `contentType` says otherwise; none (a 204) without a schema. */
interface Body {
	schema?: JsonSchema;
	contentType?: string;
}

/** By status: a success's body, or the name of a refusal in the document's components (`Conflict`). */
export type Answers = Record<number, Body | string>;

export const ok = (schema: JsonSchema, contentType?: string): Answers => ({ 200: { schema, contentType } });
export const created = (schema: JsonSchema): Answers => ({ 201: { schema } });
export const accepted = (schema: JsonSchema): Answers => ({ 202: { schema } });
/** Done, and nothing to say (v4's DELETE). */
export const noContent: Answers = { 204: {} };
