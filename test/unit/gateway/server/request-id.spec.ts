/** A request's one id (gateway/server/request-id.ts): named as moleculer-web names it, once, when it is sane. */
import type { IncomingMessage } from "http";
import { MAX_REQUEST_ID_LENGTH, requestIdOf } from "../../../../gateway/server/request-id";

const req = (headers: Record<string, string>) => ({ headers }) as IncomingMessage;

it("takes X-Correlation-ID, else X-Request-ID, else a new id, and keeps it", () => {
	let made = 0;
	const newId = () => `new-${++made}`;
	expect(requestIdOf(req({ "x-correlation-id": "c", "x-request-id": "r" }), newId)).toBe("c");
	expect(requestIdOf(req({ "x-request-id": "r" }), newId)).toBe("r");
	const bare = req({});
	expect([requestIdOf(bare, newId), requestIdOf(bare, newId)]).toEqual(["new-1", "new-1"]);
	expect(made).toBe(1);
});

it("makes a new id for one that is empty, too long, or has spaces, control or non-ASCII characters", () => {
	const fresh = () => "new-id";
	for (const given of ["", "a".repeat(MAX_REQUEST_ID_LENGTH + 1), "two words", "line\nbreak", "tab\there", "ünïcode", "\u0000"])
		expect([given, requestIdOf(req({ "x-request-id": given }), fresh)]).toEqual([given, "new-id"]);
	expect(requestIdOf(req({ "x-correlation-id": "two words", "x-request-id": "r" }), fresh)).toBe("new-id");
	expect(requestIdOf(req({ "x-request-id": "a".repeat(MAX_REQUEST_ID_LENGTH) }), fresh)).toBe("a".repeat(MAX_REQUEST_ID_LENGTH));
	expect(requestIdOf(req({ "x-request-id": 'ok:"quoted"/{json}' }), fresh)).toBe('ok:"quoted"/{json}');
});
