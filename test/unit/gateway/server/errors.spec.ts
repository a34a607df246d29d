import { Errors } from "moleculer";
import { toHttpError } from "../../../../gateway/server/errors";
import { conflict, forbidden, missing, notFound, validation } from "../../../../lib/api/errors";

describe("toHttpError", () => {
	it.each([
		[notFound("Label"), 404, { message: "404 Label Not Found" }],
		[notFound(), 404, { message: "404 Not Found" }],
		[forbidden(), 403, { message: "403 Forbidden" }],
		[forbidden("Build is not retryable"), 403, { message: "403 Forbidden  - Build is not retryable" }],
		[conflict("Label already exists"), 409, { message: "Label already exists" }],
		[missing("name"), 400, { error: "name is missing" }],
		[validation({ color: ["must be a valid color code"] }), 400, { message: { color: ["must be a valid color code"] } }],
	])("passes GitLab errors through: %s", (err, status, body) => {
		expect(toHttpError(err as any)).toEqual({ status, body, unexpected: false });
	});

	it("turns validator failures into Grape parameter errors", () => {
		const err = new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", [
			{ type: "required", field: "name", message: "" },
			{ type: "required", field: "color", message: "" },
			{ type: "string", field: "description", message: "" },
		]);
		expect(toHttpError(err)).toEqual({ status: 400, body: { error: "name is missing, color is missing, description is invalid" }, unexpected: false });
		const enumErr = new Errors.ValidationError("x", "VALIDATION_ERROR", [{ type: "enumValue", field: "scope", message: "" }]);
		expect(toHttpError(enumErr).body).toEqual({ error: "scope does not have a valid value" });
	});

	it("answers a path segment that does not decode as the client's fault: 400", () => {
		let thrown: unknown;
		try {
			decodeURIComponent("%C0%AF");
		} catch (err) {
			thrown = err;
		}
		expect(toHttpError(thrown as Error)).toEqual({ status: 400, body: { message: "400 Bad request" }, unexpected: false });
	});

	it("maps body-parser errors to 400 and 413", () => {
		expect(toHttpError({ type: "entity.parse.failed", status: 400 } as any)).toEqual({
			status: 400,
			body: { message: '400 (Bad request) "body" is invalid' },
			unexpected: false,
		});
		expect(toHttpError({ type: "entity.too.large", status: 413 } as any)).toEqual({
			status: 413,
			body: { message: "413 Request Entity Too Large" },
			unexpected: false,
		});
	});

	it("maps an unreachable backend to 503", () => {
		for (const err of [
			new Errors.ServiceNotAvailableError({ action: "labels.list" }),
			new Errors.RequestTimeoutError({ action: "labels.list" }),
			new Errors.ServiceNotFoundError({ action: "x" }),
		]) {
			expect(toHttpError(err)).toEqual({ status: 503, body: { message: "503 Service Unavailable" }, unexpected: false });
		}
	});

	it("answers anything unknown with a 500 it flags as unexpected", () => {
		expect(toHttpError(new TypeError("boom") as any)).toEqual({ status: 500, body: { message: "500 Internal Server Error" }, unexpected: true });
	});
});
