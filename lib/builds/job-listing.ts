/**
 * API v4's lists of jobs and pipelines (docs/api.md#v4-jobs): their parameters as the actions
 * declare them (checked at the gateway), GitLab's job and pipeline states read into the five a
 * build has here, and the keyset cursor. Pure.
 */
import { BUILD_STATUSES, type BuildStatus } from "../../models/build";
import { ApiError, invalidValue, paramError } from "../api/errors";
import { scopeParam } from "./build-state";

/** Every state a v4 client may ask for (GitLab's); the ones builds never have here match nothing. */
const JOB_STATES = ["created", "waiting_for_resource", "preparing", "pending", "running", "success", "failed", "canceled", "skipped", "manual", "scheduled"];

/** `scope`: one state or a list (`scope[]=running&scope[]=pending`). */
export const JOB_SCOPE_PARAM = scopeParam(JOB_STATES);

/** The states asked for among those builds have (an empty list: none of them), or null for every state. */
export function parseJobScope(raw: unknown): BuildStatus[] | null {
	if (raw === undefined || raw === null) return null;
	const values = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : typeof raw === "object" ? Object.values(raw) : null;
	if (!values || values.some(v => typeof v !== "string" || !JOB_STATES.includes(v))) throw invalidValue("scope");
	if (!values.length) return null;
	return BUILD_STATUSES.filter(s => values.includes(s));
}

/** GitLab's keyset parameters; only `order_by=id&sort=desc` (the defaults) is offered for jobs. */
export const KEYSET_PARAMS = {
	pagination: { type: "enum", values: ["offset", "keyset"], optional: true },
	order_by: { type: "string", max: 64, optional: true },
	sort: { type: "string", max: 16, optional: true },
	cursor: { type: "string", max: 512, optional: true },
} as const;

/** Keyset pages only in that order (wantsKeyset answers any other 405), as the API description states it. */
export const KEYSET_GROUP = {
	jointly: ["pagination", "order_by", "sort"],
	schema: {
		if: { required: ["pagination"], properties: { pagination: { const: "keyset" } } },
		then: { properties: { order_by: { const: "id" }, sort: { const: "desc" } } },
	},
} as const;

export interface KeysetParams {
	pagination?: "offset" | "keyset";
	order_by?: string;
	sort?: string;
	cursor?: string;
}

/** GitLab's answer to a keyset request in an order it does not offer. */
const keysetUnavailable = () => new ApiError(405, { message: "Keyset pagination is not yet available for this type of request" });

/** Whether the request asks for keyset pages (405 when in an order jobs do not offer). */
export function wantsKeyset(p: KeysetParams): boolean {
	if (p.pagination !== "keyset") return false;
	if ((p.order_by ?? "id") !== "id" || (p.sort ?? "desc") !== "desc") throw keysetUnavailable();
	return true;
}

/** Where a keyset page ends: the last job's id and its number in the project (`seq`, which follows the id). */
export interface JobCursor {
	id: number;
	seq: number;
}

/** Opaque to clients, as GitLab's (base64 of JSON); `_kd: "n"` as GitLab's says "next". */
export function encodeCursor(c: JobCursor): string {
	return Buffer.from(JSON.stringify({ id: String(c.id), seq: String(c.seq), _kd: "n" })).toString("base64url");
}

/** A cursor this service made (any other: 400 `cursor is invalid`). */
export function decodeCursor(raw: string): JobCursor {
	let parsed: unknown;
	try {
		parsed = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
	} catch {
		throw paramError("cursor is invalid");
	}
	const { id, seq } = (parsed ?? {}) as { id?: unknown; seq?: unknown };
	const digits = (v: unknown) => typeof v === "string" && /^[1-9]\d{0,14}$/.test(v);
	if (!digits(id) || !digits(seq)) throw paramError("cursor is invalid");
	return { id: Number(id), seq: Number(seq) };
}

/** The parameters of `GET /projects/:id/pipelines` this service reads. */
const PIPELINE_ORDER_FIELDS = ["id", "status", "ref", "updated_at", "user_id"] as const;
export const PIPELINE_LIST_PARAMS = {
	scope: { type: "enum", values: ["running", "pending", "finished", "branches", "tags"], optional: true },
	status: { type: "enum", values: JOB_STATES, optional: true },
	ref: { type: "string", max: 1024, optional: true },
	sha: { type: "string", max: 64, optional: true },
	order_by: { type: "enum", values: PIPELINE_ORDER_FIELDS, optional: true },
	sort: { type: "enum", values: ["asc", "desc"], optional: true },
} as const;

export interface PipelineListParams {
	scope?: "running" | "pending" | "finished" | "branches" | "tags";
	status?: string;
	ref?: string;
	sha?: string;
	order_by?: (typeof PIPELINE_ORDER_FIELDS)[number];
	sort?: "asc" | "desc";
}

/** The states a pipelines list keeps (`status`, and `scope`'s running, pending and finished); null for all. */
export function pipelineStatuses(p: PipelineListParams): BuildStatus[] | null {
	let wanted: BuildStatus[] | null = null;
	if (p.status !== undefined) wanted = BUILD_STATUSES.filter(s => s === p.status);
	const byScope: Partial<Record<string, BuildStatus[]>> = { running: ["running"], pending: ["pending"], finished: ["success", "failed", "canceled"] };
	const scoped = p.scope ? byScope[p.scope] : undefined;
	if (scoped) wanted = (wanted ?? scoped).filter(s => scoped.includes(s));
	return wanted;
}
