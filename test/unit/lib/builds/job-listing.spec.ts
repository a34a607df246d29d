/** v4's job and pipeline list parameters (lib/builds/job-listing.ts) and a pipeline's status from its builds' (lib/builds/pipeline-status.ts). */
import { decodeCursor, encodeCursor, parseJobScope, pipelineStatuses, wantsKeyset } from "../../../../lib/builds/job-listing";
import { compositeStatus } from "../../../../lib/builds/pipeline-status";
import type { BuildStatus } from "../../../../models/build";

it("reads scope as GitLab's states, keeping those builds have here", () => {
	expect(parseJobScope(undefined)).toBeNull();
	expect(parseJobScope("running")).toEqual(["running"]);
	expect(parseJobScope(["failed", "pending", "manual"])).toEqual(["pending", "failed"]);
	expect(parseJobScope(["manual", "skipped"])).toEqual([]);
	expect(parseJobScope({ 0: "success" })).toEqual(["success"]);
	expect(() => parseJobScope(["nope"])).toThrow(expect.objectContaining({ code: 400, data: { body: { error: "scope does not have a valid value" } } }));
});

it("offers keyset pages of jobs by id, newest first, and says 405 otherwise", () => {
	expect(wantsKeyset({})).toBe(false);
	expect(wantsKeyset({ pagination: "offset", order_by: "name" })).toBe(false);
	expect(wantsKeyset({ pagination: "keyset" })).toBe(true);
	expect(wantsKeyset({ pagination: "keyset", order_by: "id", sort: "desc" })).toBe(true);
	for (const p of [{ order_by: "created_at" }, { sort: "asc" }])
		expect(() => wantsKeyset({ pagination: "keyset", ...p })).toThrow(
			expect.objectContaining({ code: 405, data: { body: { message: "Keyset pagination is not yet available for this type of request" } } }),
		);
});

it("round-trips its cursors and refuses anyone else's", () => {
	const cursor = encodeCursor({ id: 1234, seq: 77 });
	expect(JSON.parse(Buffer.from(cursor, "base64url").toString())).toEqual({ id: "1234", seq: "77", _kd: "n" });
	expect(decodeCursor(cursor)).toEqual({ id: 1234, seq: 77 });
	for (const bad of [
		"",
		"x",
		Buffer.from('{"id":"1"}').toString("base64url"),
		Buffer.from('{"id":"1","seq":"-2"}').toString("base64url"),
		Buffer.from("[]").toString("base64url"),
	])
		expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 400, data: { body: { error: "cursor is invalid" } } }));
});

it("filters pipelines by status and scope", () => {
	expect(pipelineStatuses({})).toBeNull();
	expect(pipelineStatuses({ scope: "finished" })).toEqual(["success", "failed", "canceled"]);
	expect(pipelineStatuses({ scope: "finished", status: "failed" })).toEqual(["failed"]);
	expect(pipelineStatuses({ scope: "running", status: "failed" })).toEqual([]);
	expect(pipelineStatuses({ status: "manual" })).toEqual([]);
	expect(pipelineStatuses({ scope: "tags" })).toBeNull();
});

it("works a pipeline's status out as GitLab's composite status does", () => {
	const of = (...s: BuildStatus[]) => compositeStatus(new Set(s));
	expect(of()).toBeNull();
	expect(of("success")).toBe("success");
	expect(of("success", "canceled")).toBe("canceled");
	expect(of("canceled")).toBe("canceled");
	expect(of("pending")).toBe("pending");
	expect(of("pending", "success")).toBe("running");
	expect(of("running", "failed")).toBe("running");
	expect(of("failed", "success")).toBe("failed");
	expect(of("failed", "canceled")).toBe("failed");
});
