/**
 * Validation and merging of integration settings (PUT), driven by the catalogue. Pure: the
 * integrations service encrypts the secrets this reports as changed and stores the result.
 *
 * Errors, in GitLab 8.16's two forms:
 * - parameter errors (Grape): `{"error":"api_key is missing"}`, `{"error":"server_port is invalid"}`,
 *   `{"error":"color does not have a valid value"}`, several joined with ", ";
 * - model validations: `{"message":{"project_url":["must be a valid URL"]}}`.
 *
 * A request that names the integration by GitLab 8.16's service name may send GitLab's field names
 * (`bamboo_url`) and is answered in them; the spec's names are accepted alike (catalogue.ts).
 *
 * Secrets are write-only (GET never returns them), so a required secret that is already
 * stored may be left out of a later PUT. The exception is GitLab's `reset_password`: a
 * password is dropped when its server URL changes and the password is not sent again, which
 * then makes it missing: the stored password never follows a URL to another server.
 */
import { readBoolean } from "../api/booleans";
import { paramError, validation } from "../api/errors";
import type { ApiVersion, FieldDef, IntegrationDef } from "./catalogue";
import { fieldLabel, fieldsOf, isRequired, isSecret } from "./catalogue";
import type { EventFlag } from "../../models/integration";
import { charCount } from "../text/chars";
import { HTTP_URL } from "../text/formats";

export type Properties = Record<string, unknown>;

export const MAX_VALUE_LENGTH = 10_000;
/** An integer field's text (a form's). */
const INTEGER_TEXT = /^\s*-?\d{1,15}\s*$/;

export interface MergeResult {
	/** Declared fields only; untouched secrets keep their stored (encrypted) value. */
	properties: Properties;
	/** Secret fields whose new plain value is in `properties` and must be encrypted. */
	secretsChanged: string[];
}

const BLANK = Symbol("blank");
type Coerced = { value: unknown } | { error: string };

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/** true/false/1/0, as strings (any case) or as JSON values. */
export function parseBoolean(v: unknown): boolean | undefined {
	if (typeof v === "boolean") return v;
	if (v === 1 || v === 0) return v === 1;
	if (typeof v === "string") {
		const s = v.trim().toLowerCase();
		if (s === "true" || s === "1") return true;
		if (s === "false" || s === "0") return false;
	}
	return undefined;
}

/** An http(s) URL with a host and no whitespace (lib/text/formats.ts, as the API description states it). */
const isHttpUrl = (v: string) => !/\s/.test(v) && HTTP_URL.test(v);

/** `label`: the name the request knows the field by (GitLab's or the spec's); v4 reads booleans as its Grape does. */
function coerce(f: FieldDef, raw: unknown, label: string, version: ApiVersion): Coerced {
	switch (f.type) {
		case "boolean": {
			const b = version === "v4" ? readBoolean(raw) : parseBoolean(raw);
			return b === undefined ? { error: `${label} is invalid` } : { value: b };
		}
		case "integer": {
			const n = typeof raw === "number" ? raw : typeof raw === "string" && INTEGER_TEXT.test(raw) ? Number(raw) : NaN;
			if (!Number.isSafeInteger(n)) return { error: `${label} is invalid` };
			if ((f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) return { error: `${label} does not have a valid value` };
			return { value: n };
		}
		case "select": {
			const s = typeof raw === "string" ? raw.trim() : typeof raw === "number" ? String(raw) : undefined;
			return s !== undefined && f.options?.includes(s) ? { value: s } : { error: `${label} does not have a valid value` };
		}
		default: {
			if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "boolean") return { error: `${label} is invalid` };
			return { value: typeof raw === "string" ? (f.type === "url" ? raw.trim() : raw) : String(raw) };
		}
	}
}

/** How the request named the integration (catalogue.ts `resolveIntegration`), and in which API. */
export interface MergeOptions {
	/** By GitLab's service name: GitLab's field names are preferred and used in errors. */
	byGitLabName?: boolean;
	/** The API whose fields the request may set and must send (catalogue.ts `fieldsOf`); v3 when absent. */
	version?: ApiVersion;
}

const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/**
 * The value sent for a field under either of its names; the name the request's own vocabulary
 * uses first (GitLab's when it addressed the integration by GitLab's name).
 */
function sentValue(f: FieldDef, input: Record<string, unknown>, byGitLabName: boolean): { sent: boolean; raw?: unknown } {
	const names = byGitLabName ? [f.gitlabName, f.name] : [f.name, f.gitlabName];
	for (const name of names) if (name && has(input, name)) return { sent: true, raw: input[name] };
	return { sent: false };
}

type Given = Map<string, unknown>;
type Label = (f: FieldDef) => string;

/** The stored values of the declared fields that are set (secrets still encrypted), both APIs': a PUT of one keeps the other's. */
function storedValues(def: IntegrationDef, stored: Properties | null | undefined): Properties {
	const current: Properties = {};
	for (const f of def.fields) if (stored && !isBlank(stored[f.name])) current[f.name] = stored[f.name];
	return current;
}

/** Each sent field of `fields`, coerced (BLANK when sent empty); the ones that do not coerce become parameter errors. */
function readSent(fields: readonly FieldDef[], sentInput: Record<string, unknown>, current: Properties, label: Label, opts: Required<MergeOptions>) {
	const given: Given = new Map();
	const invalid = new Set<string>();
	const errors: string[] = [];
	for (const f of fields) {
		const { sent, raw } = sentValue(f, sentInput, opts.byGitLabName);
		if (!sent) continue;
		if (isBlank(raw)) {
			given.set(f.name, BLANK);
			continue;
		}
		const c = coerce(f, raw, label(f), opts.version);
		if ("error" in c) {
			errors.push(c.error);
			invalid.add(f.name);
		} else {
			// Secrets inside the text that GET did not show come back from what is stored.
			const stored = current[f.name];
			given.set(
				f.name,
				f.embeddedSecrets && typeof c.value === "string" && typeof stored === "string" ? f.embeddedSecrets.kept(c.value, stored) : c.value,
			);
		}
	}
	return { given, invalid, errors };
}

/** reset_password: a changed URL without the password drops the stored one. */
function dropMovedPasswords(def: IntegrationDef, given: Given, current: Properties): void {
	for (const f of def.fields) {
		if (!f.resetWhenChanged || given.has(f.name)) continue;
		const moved = f.resetWhenChanged.some(other => given.has(other) && given.get(other) !== BLANK && given.get(other) !== current[other]);
		if (moved) delete current[f.name];
	}
}

/** The API's required fields neither sent nor stored (a stored secret counts), named as the request knows them. */
function missingFields(def: IntegrationDef, version: ApiVersion, given: Given, current: Properties, invalid: Set<string>, label: Label): string[] {
	return fieldsOf(def, version)
		.filter(f => isRequired(f, version) && !invalid.has(f.name))
		.filter(f => {
			const v = given.get(f.name);
			if (v !== undefined && v !== BLANK) return false;
			return !(isSecret(f) && v === undefined && current[f.name] !== undefined);
		})
		.map(f => `${label(f)} is missing`);
}

/** The stored values with the sent ones applied (BLANK removes), and which secrets now hold plain values. */
function applySent(def: IntegrationDef, current: Properties, given: Given): MergeResult {
	const properties: Properties = { ...current };
	const secretsChanged: string[] = [];
	for (const f of def.fields) {
		if (!given.has(f.name)) continue;
		const v = given.get(f.name);
		if (v === BLANK) delete properties[f.name];
		else {
			properties[f.name] = v;
			if (isSecret(f)) secretsChanged.push(f.name);
		}
	}
	return { properties, secretsChanged };
}

/** The model validations (length, URL, pattern, then the integration's own rules), as GitLab's 400 `message`. */
function checkModel(def: IntegrationDef, given: Given, properties: Properties, label: Label): void {
	const modelErrors: Record<string, string[]> = {};
	const add = (field: string, msg: string) => {
		const list = (modelErrors[field] ??= []);
		if (!list.includes(msg)) list.push(msg);
	};
	for (const f of def.fields) {
		const v = given.get(f.name);
		if (v === undefined || v === BLANK) continue;
		// Coerced values are strings, numbers or booleans.
		const text = typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "";
		// A URL is bounded by the body's limit alone: sent with spaces around it, it is taken trimmed.
		if (typeof v === "string" && f.type !== "url" && charCount(v) > MAX_VALUE_LENGTH)
			add(label(f), `is too long (maximum is ${MAX_VALUE_LENGTH} characters)`);
		else if (f.type === "url" && !isHttpUrl(text)) add(label(f), "must be a valid URL");
		else if (f.pattern && !f.pattern.test(text)) add(label(f), f.patternMessage ?? "is invalid");
	}
	if (!Object.keys(modelErrors).length && def.validate) {
		const extra = def.validate(properties);
		if (extra) for (const [field, msgs] of Object.entries(extra)) for (const m of msgs) add(field, m);
	}
	if (Object.keys(modelErrors).length) throw validation(modelErrors);
}

/**
 * The settings a PUT leaves: `stored` (the current properties, secrets still encrypted) with
 * the declared fields of `input` applied. Unknown input keys are ignored. Throws a 400 ApiError
 * and changes nothing when the input is not acceptable.
 */
export function mergeSettings(
	def: IntegrationDef,
	stored: Properties | null | undefined,
	input: Record<string, unknown>,
	opts: MergeOptions = {},
): MergeResult {
	const byGitLabName = !!opts.byGitLabName;
	const version = opts.version ?? "v3";
	const current = storedValues(def, stored);

	// GitLab's own parameters that stand for several of the spec's fields (jira's url and project_key).
	const fromGitLab = def.fromGitLab?.(input, version) ?? { fields: {}, missing: [] };
	const sources = fromGitLab.sources ?? {};
	const label = (f: FieldDef) => sources[f.name] ?? fieldLabel(f, byGitLabName);
	const sentInput: Record<string, unknown> = { ...fromGitLab.fields, ...input };
	// The API's own fields, and those worked out for the other's (a Jira's links, its url).
	const taken = def.fields.filter(f => fieldsOf(def, version).includes(f) || f.name in fromGitLab.fields);

	const { given, invalid, errors } = readSent(taken, sentInput, current, label, { byGitLabName, version });
	const paramErrors = [...fromGitLab.missing.map(name => `${name} is missing`), ...errors];
	dropMovedPasswords(def, given, current);
	// GitLab's own parameters that are missing are named instead of the spec's required fields.
	const missing = fromGitLab.missing.length ? [] : missingFields(def, version, given, current, invalid, label);
	if (missing.length || paramErrors.length) throw paramError([...missing, ...paramErrors].join(", "));

	const merged = applySent(def, current, given);
	checkModel(def, given, merged.properties, label);
	return merged;
}

const FLAG_OF_KIND: Record<string, EventFlag | undefined> = {
	push: "push_events",
	tag_push: "tag_push_events",
	issue: "issues_events",
	merge_request: "merge_requests_events",
	note: "note_events",
	build: "build_events",
};

/** GitLab's `push_hooks` scope plus `supported_events`: active, the event's flag on, and the kind supported. */
export function handlesEvent(def: IntegrationDef, record: ({ active?: boolean } & Partial<Record<EventFlag, boolean>>) | null, kind: string): boolean {
	if (!record?.active) return false;
	if (!def.events.includes(kind as never)) return false;
	const flag = FLAG_OF_KIND[kind];
	return !flag || record[flag] !== false;
}
