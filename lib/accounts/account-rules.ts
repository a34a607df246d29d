/**
 * Validation of new users and projects, as GitLab 8.x model errors (`{"field":["…"]}`), and the
 * same rules as keywords of the parameters' JSON Schema for the API description (`openapi`).
 */
import { VISIBILITY_LEVELS } from "./access";
import { schemaPattern } from "../api/schema-pattern";
import { charCount } from "../text/chars";
import type { ProjectDoc } from "../../models/project";

type Errors = Record<string, string[]>;

/** A username or a project's path: letters, digits, `_`, `.`, `-`; not first `-`, not ending `.git` or `.atom`. */
const PATH_SEGMENT = /^(?!.*\.(git|atom)$)[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PROJECT_NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_. -]*$/u;
const MIN_PASSWORD = 8;

function add(errors: Errors, field: string, message: string) {
	(errors[field] ??= []).push(message);
}

export function validateNewUser(p: { email: string; password: string; username: string; name: string }): Errors | null {
	const errors: Errors = {};
	if (!p.username.trim()) add(errors, "username", "can't be blank");
	else if (!PATH_SEGMENT.test(p.username))
		add(errors, "username", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.git' or '.atom'.");
	if (!p.name.trim()) add(errors, "name", "can't be blank");
	if (!EMAIL.test(p.email)) add(errors, "email", "is invalid");
	if (charCount(p.password) < MIN_PASSWORD) add(errors, "password", `is too short (minimum is ${MIN_PASSWORD} characters)`);
	return Object.keys(errors).length ? errors : null;
}

/** GitLab's `parameterize` of a name into a path. */
export function pathFromName(name: string): string {
	return name
		.trim()
		.toLowerCase()
		.replace(/[^a-z0-9_.-]+/g, "-")
		.replace(/^-+|-+$/g, "");
}

export function validateNewProject(
	p: { name: string; path?: string; description?: string; visibility_level?: number; public_builds?: boolean },
	namespace: string,
): {
	errors: Errors | null;
	project?: Pick<ProjectDoc, "name" | "path" | "namespace" | "path_with_namespace" | "description" | "visibility_level" | "public_builds">;
} {
	const errors: Errors = {};
	const name = p.name.trim();
	const path = (p.path ?? "").trim() || pathFromName(name);
	if (!name) add(errors, "name", "can't be blank");
	else if (!PROJECT_NAME.test(name))
		add(errors, "name", "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'.");
	if (!path) add(errors, "path", "can't be blank");
	else if (!PATH_SEGMENT.test(path))
		add(errors, "path", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'");
	const visibility = p.visibility_level ?? 0;
	if (!(VISIBILITY_LEVELS as readonly number[]).includes(visibility)) add(errors, "visibility_level", "is not included in the list");
	if (Object.keys(errors).length) return { errors };
	return {
		errors: null,
		project: {
			name,
			path,
			namespace,
			path_with_namespace: `${namespace}/${path}`,
			description: p.description ?? null,
			visibility_level: visibility,
			public_builds: p.public_builds ?? true,
		},
	};
}

/** The rules above, as JSON Schema keywords of each parameter (`openapi`), for the API description. */
const NOT_BLANK = schemaPattern(/\S/);
export const NEW_USER_DOC = {
	username: { pattern: schemaPattern(PATH_SEGMENT) },
	name: { pattern: NOT_BLANK },
	email: { pattern: schemaPattern(EMAIL) },
	password: { minLength: MIN_PASSWORD },
} as const;

/** A project's name or path as sent: the rule holds for it trimmed. */
const NAME_SENT = { pattern: schemaPattern(/^\s*[\p{L}\p{N}_][\p{L}\p{N}_. -]*\s*$/u) };
const PATH_SENT = { pattern: schemaPattern(/^\s*(?!.*\.(git|atom)\s*$)[a-zA-Z0-9_.][a-zA-Z0-9_.-]*\s*$/) };
const BLANK = { pattern: schemaPattern(/^\s*$/) };
/**
 * A name a path can be made of (pathFromName): a name as above with one character that lower-cases
 * into [a-z0-9_.] (`K`, the Kelvin sign, and `İ` do too), and not ending `.git`/`.atom` once made.
 * One pattern, so that a generator makes such names at once.
 */
const KEPT = "A-Za-z0-9_.\\u0130\\u212a";
const NAME_MAKES_A_PATH = {
	pattern: schemaPattern(/^\s*(?:[A-Za-z0-9_\u0130\u212a][\p{L}\p{N}_. -]*|[\p{L}\p{N}_][\p{L}\p{N}_. -]*[A-Za-z0-9_.\u0130\u212a][\p{L}\p{N}_. -]*)\s*$/u),
	not: { pattern: `\\.([gG][iI][tT]|[aA][tT][oO][mM])[^${KEPT}]*$` },
};
/** A path that is the name too (v4's create without a name): both rules at once. */
const PATH_AS_NAME = { pattern: schemaPattern(/^\s*(?!.*\.(git|atom)\s*$)[a-zA-Z0-9_][a-zA-Z0-9_.-]*\s*$/) };

/** Sent and not null (the validator takes a null as not sent). */
const sent = (name: string) => ({ required: [name], properties: { [name]: { type: "string" } } });
/** Not sent, null, or blank: the path is made of the name. */
const NO_PATH = { properties: { path: { anyOf: [{ type: "null" }, BLANK] } } };

/**
 * validateNewProject's rules over `name` and `path`, as the API description states them: a path
 * sent and not blank is the path, and the name is a name; otherwise the path is made of the name.
 */
export const NEW_PROJECT_DOC = {
	visibility_level: { enum: VISIBILITY_LEVELS },
	jointly: {
		jointly: ["name", "path"],
		schema: {
			anyOf: [
				{ allOf: [sent("path")], properties: { name: NAME_SENT, path: PATH_SENT } },
				{ ...NO_PATH, allOf: [{ properties: { name: NAME_MAKES_A_PATH } }] },
			],
		},
	},
} as const;

/** v4's: `name` or `path`, and a path without a name is the name too. */
export const NEW_PROJECT_V4_JOINTLY = {
	jointly: ["name", "path"],
	schema: {
		anyOf: [
			{ allOf: [sent("name"), sent("path")], properties: { name: NAME_SENT, path: PATH_SENT } },
			{ ...NO_PATH, allOf: [sent("name"), { properties: { name: NAME_MAKES_A_PATH } }] },
			{ allOf: [sent("path"), { not: sent("name") }], properties: { path: PATH_AS_NAME } },
		],
	},
} as const;
