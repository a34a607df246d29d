import {
	assertErasable,
	assertRetryable,
	cancelPatch,
	isCanonicalScope,
	parseCoverage,
	parseRunnerUpdate,
	parseScope,
	retriedBuildState,
	runnerTransition,
	type BuildStateView,
} from "../../../../lib/builds/build-state";
import { BUILD_STATUSES, type BuildStatus } from "../../../../models/build";
import { ApiError } from "../../../../lib/api/errors";

const NOW = "2016-01-11T10:15:10.506Z";
const T0 = "2016-01-11T10:13:33.506Z";

function build(status: BuildStatus, started_at: string | null = null, finished_at: string | null = null): BuildStateView {
	return { status, started_at, finished_at };
}

/** The GitLab status and body an ApiError carries. */
function errorOf(fn: () => unknown): { code: number; body: unknown } {
	try {
		fn();
	} catch (err) {
		expect(err).toBeInstanceOf(ApiError);
		return { code: (err as ApiError).code, body: (err as ApiError).data.body };
	}
	throw new Error("expected an error");
}

describe("runnerTransition", () => {
	it("pending → running sets started_at only", () => {
		expect(runnerTransition(build("pending"), "running", NOW)).toEqual({ status: "running", started_at: NOW });
	});

	it.each(["success", "failed"] as const)("running → %s sets finished_at and keeps started_at", to => {
		expect(runnerTransition(build("running", T0), to, NOW)).toEqual({ status: to, finished_at: NOW });
	});

	it.each(["success", "failed"] as const)("pending → %s (never ran) sets finished_at, started_at stays null", to => {
		expect(runnerTransition(build("pending"), to, NOW)).toEqual({ status: to, finished_at: NOW });
	});

	it("carries coverage along with the change", () => {
		expect(runnerTransition(build("running", T0), "success", NOW, 87.5)).toEqual({ status: "success", finished_at: NOW, coverage: 87.5 });
	});

	it("re-sending the current status is a no-op apart from coverage", () => {
		expect(runnerTransition(build("running", T0), "running", NOW)).toEqual({});
		expect(runnerTransition(build("success", T0, T0), "success", NOW, 12)).toEqual({ coverage: 12 });
	});

	it.each([
		["success", "running"],
		["success", "failed"],
		["failed", "running"],
		["failed", "success"],
		["canceled", "running"],
		["canceled", "success"],
		["canceled", "failed"],
	] as const)("%s → %s is a 400 naming both states", (from, to) => {
		const { code, body } = errorOf(() => runnerTransition(build(from, T0, T0), to, NOW));
		expect(code).toBe(400);
		expect(body).toEqual({ message: `Cannot transition build status from ${from} to ${to}` });
	});
});

describe("cancel", () => {
	it.each(["pending", "running"] as const)("%s → canceled with finished_at", status => {
		expect(cancelPatch(build(status), NOW)).toEqual({ status: "canceled", finished_at: NOW });
	});

	it.each(["success", "failed", "canceled"] as const)("%s is left unchanged (null patch)", status => {
		expect(cancelPatch(build(status, T0, T0), NOW)).toBeNull();
	});
});

describe("retry", () => {
	it.each(["success", "failed", "canceled"] as const)("a %s build is retryable", status => {
		expect(() => assertRetryable(build(status, T0, T0))).not.toThrow();
	});

	it.each(["pending", "running"] as const)("a %s build is a 403 'Build is not retryable'", status => {
		expect(errorOf(() => assertRetryable(build(status)))).toEqual({ code: 403, body: { message: "403 Forbidden  - Build is not retryable" } });
	});

	it("the new build starts pending with no times and no coverage", () => {
		expect(retriedBuildState(NOW)).toEqual({ status: "pending", created_at: NOW, started_at: null, finished_at: null, coverage: null });
	});
});

describe("erase", () => {
	const forbidden = { code: 403, body: { message: "403 Forbidden  - Build is not erasable!" } };

	it.each(["success", "failed", "canceled"] as const)("a %s build with artifacts or a trace is erasable", status => {
		expect(() => assertErasable(build(status, T0, T0), { artifacts: true, trace: false })).not.toThrow();
		expect(() => assertErasable(build(status, T0, T0), { artifacts: false, trace: true })).not.toThrow();
	});

	it("a finished build with nothing to erase is a 403", () => {
		expect(errorOf(() => assertErasable(build("failed", T0, T0), { artifacts: false, trace: false }))).toEqual(forbidden);
	});

	it.each(["pending", "running"] as const)("an unfinished (%s) build is a 403 even with a trace", status => {
		expect(errorOf(() => assertErasable(build(status), { artifacts: true, trace: true }))).toEqual(forbidden);
	});
});

describe("parseScope", () => {
	const invalid = { code: 400, body: { error: "scope does not have a valid value" } };

	it("absent or empty means all builds", () => {
		expect(parseScope(undefined)).toBeNull();
		expect(parseScope(null)).toBeNull();
		expect(parseScope("")).toBeNull();
		expect(parseScope([])).toBeNull();
		expect(parseScope([""])).toBeNull(); // scope[]=
	});

	it("accepts each status alone", () => {
		for (const s of BUILD_STATUSES) expect(parseScope(s)).toEqual([s]);
	});

	it("accepts a list (scope[]=…) and an index-keyed object (scope[0]=…), distinct, in a fixed order", () => {
		expect(parseScope(["running", "pending", "running"])).toEqual(["pending", "running"]);
		expect(parseScope({ 0: "success", 1: "canceled" })).toEqual(["success", "canceled"]);
		expect(parseScope(["failed", ""])).toEqual(["failed"]);
	});

	it.each([
		["unknown"],
		["created"], // documented by GitLab, refused by its 8.x Grape declaration
		["skipped"],
		["PENDING"],
		[["pending", "unknown_status"]],
		[{ 0: "pending", 1: "bogus" }],
		[[["pending"]]],
		[{ a: { b: "pending" } }],
		[42],
		[true],
	])("%j is a 400", raw => {
		expect(errorOf(() => parseScope(raw))).toEqual(invalid);
	});
});

describe("isCanonicalScope", () => {
	it("is one spelling per set of states: absent, one state, or several in BUILD_STATUSES order", () => {
		for (const scope of [undefined, "failed", ["running", "failed"], ["pending", "running", "failed", "success", "canceled"]])
			expect([scope, isCanonicalScope({ scope })]).toEqual([scope, true]);
	});

	it("is false for every other spelling, which parseScope still accepts", () => {
		for (const scope of ["", [], [""], ["failed"], ["failed", "running"], ["running", "running"], ["running", "failed", "failed"], { 0: "failed" }]) {
			expect(() => parseScope(scope)).not.toThrow();
			expect([scope, isCanonicalScope({ scope })]).toEqual([scope, false]);
		}
	});
});

describe("parseRunnerUpdate", () => {
	it("needs a status", () => {
		expect(errorOf(() => parseRunnerUpdate({}))).toEqual({ code: 400, body: { error: "status is missing" } });
		expect(errorOf(() => parseRunnerUpdate({ status: "" }))).toEqual({ code: 400, body: { error: "status is missing" } });
	});

	it.each(["pending", "canceled", "done", 1, ["running"], { $ne: "x" }])("status %j is not one a runner may send", status => {
		expect(errorOf(() => parseRunnerUpdate({ status }))).toEqual({ code: 400, body: { error: "status does not have a valid value" } });
	});

	it("reads status and optional coverage", () => {
		expect(parseRunnerUpdate({ status: "running" })).toEqual({ status: "running" });
		expect(parseRunnerUpdate({ status: "success", coverage: "98.25" })).toEqual({ status: "success", coverage: 98.25 });
		expect(parseRunnerUpdate({ status: "failed", coverage: null })).toEqual({ status: "failed", coverage: null });
	});
});

describe("parseCoverage", () => {
	it.each([
		[0, 0],
		[100, 100],
		[12.5, 12.5],
		["7", 7],
		["", null],
		[null, null],
	])("%j → %j", (raw, out) => {
		expect(parseCoverage(raw)).toBe(out);
	});

	it.each([-1, 100.01, "abc", "1e3", Number.NaN, Infinity, {}, [], true])("%j is a 400", raw => {
		expect(errorOf(() => parseCoverage(raw))).toEqual({ code: 400, body: { error: "coverage is invalid" } });
	});
});
