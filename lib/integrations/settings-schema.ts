/**
 * What a PUT of one integration takes, as JSON Schema, for the API description: its fields in the
 * request's API (catalogue.ts `fieldsOf`, under the names the document addresses it by) as
 * settings.ts reads them, and in v4 its event flags. A field sent blank clears it; a required one
 * must be sent, except a secret already stored (write-only: which the schema cannot know, so the
 * document says a 400 may refuse it, its `RuleRefusal`).
 */
import { BOOLEAN_TEXT } from "../api/booleans";
import { decimalUpTo, schemaPattern } from "../api/schema-pattern";
import { HTTP_URL } from "../text/formats";
import { CATALOGUE, fieldLabel, fieldsOf, isRequired, isSecret, v4FlagNames, type ApiVersion, type FieldDef, type IntegrationDef } from "./catalogue";
import { MAX_VALUE_LENGTH } from "./settings";

type Schema = Record<string, unknown>;

const BLANK = { anyOf: [{ type: "null" }, { type: "string", pattern: schemaPattern(/^\s*$/) }] };
const NOT_BLANK = schemaPattern(/\S/);

/** settings.ts `parseBoolean` (v3): true/false/1/0 in any case, spaces around them; JSON's booleans, 1 and 0. */
const V3_BOOLEAN = { anyOf: [{ type: "boolean" }, { enum: [1, 0] }, { type: "string", pattern: schemaPattern(/^\s*(true|false|1|0)\s*$/i) }] };
/** booleans.ts `readBoolean` (v4): Grape's spellings in any case; numbers 1 and 0. */
const V4_BOOLEAN = { anyOf: [{ type: "boolean" }, { enum: [1, 0] }, { type: "string", pattern: schemaPattern(BOOLEAN_TEXT) }] };

/** A field's value that settings.ts `coerce` takes and its model check lets through (not blank: that clears it). */
function valueSchema(f: FieldDef, version: ApiVersion): Schema {
	switch (f.type) {
		case "boolean":
			return version === "v4" ? V4_BOOLEAN : V3_BOOLEAN;
		case "integer":
			return { anyOf: [{ type: "integer", minimum: f.min ?? -Number.MAX_SAFE_INTEGER, maximum: f.max ?? Number.MAX_SAFE_INTEGER }, integerText(f)] };
		case "select":
			return { anyOf: [{ type: "string", pattern: schemaPattern(new RegExp(`^\\s*(${(f.options ?? []).map(escape).join("|")})\\s*$`)) }] };
		case "url":
			// Trimmed, then an http(s) URL without whitespace.
			return {
				type: "string",
				pattern: schemaPattern(new RegExp(`^\\s*${HTTP_URL.source.slice(1, -1)}\\s*$`)),
				not: { pattern: schemaPattern(/\S\s+\S/) },
			};
		default: {
			const text: Schema = {
				type: "string",
				maxLength: MAX_VALUE_LENGTH,
				pattern: NOT_BLANK,
				...(f.pattern ? { allOf: [{ pattern: schemaPattern(f.pattern) }] } : {}),
			};
			// A number or a boolean is its text; a field with a pattern (letters and digits) takes whole numbers from 0 in plain digits, and booleans.
			const asText = f.pattern ? [{ type: "integer", minimum: 0, maximum: 1e21 - 1 }, { type: "boolean" }] : [{ type: ["number", "boolean"] }];
			return { anyOf: [text, ...asText] };
		}
	}
}

/** An integer field's text within its bounds, as settings.ts reads it: up to 15 digits, spaces around them. */
function integerText(f: FieldDef): Schema {
	const digits = `(?=\\s*-?\\d{1,15}\\s*$)`;
	const upTo = (max: number) => `0*${decimalUpTo(max)}`;
	const within = f.min === 0 && f.max !== undefined ? `(-?0+|${upTo(f.max)})` : f.min === 1 && f.max !== undefined ? upTo(f.max) : "-?\\d+";
	return { type: "string", pattern: schemaPattern(new RegExp(`^${digits}\\s*${within}\\s*$`)) };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The body of a PUT of `def` in `version`'s API, addressed by GitLab's name (`byGitLabName`) or
 * the spec's slug: each field optional (or required, sent and not blank), blank clearing it.
 */
export function settingsSchema(def: IntegrationDef, version: ApiVersion, byGitLabName: boolean): Schema {
	const properties: Record<string, Schema> = {};
	const required: string[] = [];
	for (const f of fieldsOf(def, version)) {
		const value = valueSchema(f, version);
		const name = fieldLabel(f, byGitLabName);
		// A required field sent blank is missing; a secret already stored may be left out (the 400 the schema cannot foresee).
		if (isRequired(f, version) && !isSecret(f)) {
			properties[name] = value;
			required.push(name);
		} else properties[name] = { anyOf: [value, BLANK] };
	}
	if (version === "v4") for (const flag of v4FlagNames(def)) properties[flag] ??= { anyOf: [V4_BOOLEAN, { enum: [null, ""] }] };
	return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The PUT of an integration named otherwise (`drone_ci`, the other API's name): its fields are those of its own operation. */
export const ANY_INTEGRATION = {
	type: "object",
	properties: {},
	description: "The integration's fields, as the operation under its name lists them.",
};

/** Every name an integration answers to (catalogue.ts `resolveIntegration`): its slug or GitLab's, `-` or `_` alike. */
export const INTEGRATION_NAME = {
	pattern: `^(${[...new Set(CATALOGUE.flatMap(def => [def.slug, def.gitlabName]))].map(name => escape(name).replace(/-/g, "[-_]")).join("|")})$`,
};
