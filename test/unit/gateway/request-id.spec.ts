/** A request's one id (gateway/request-id.ts): named as moleculer-web names it, once. */
import type { IncomingMessage } from "http";
import { requestIdOf } from "../../../gateway/request-id";

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
