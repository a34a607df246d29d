/**
 * A request's id, named once and read by everything that tells it: the `X-Request-ID` of the
 * answer, the context moleculer-web makes (its `rootCallOptions`), and the log line of a failure
 * (gateway/guarded-entry.ts). As moleculer-web names it: the client's `X-Correlation-ID`, else its
 * `X-Request-ID`, else a new id.
 */
import type { IncomingMessage } from "http";

const ID = Symbol("request id");

export function requestIdOf(req: IncomingMessage, newId: () => string): string {
	const named = req as IncomingMessage & { [ID]?: string };
	return (named[ID] ??= String(req.headers["x-correlation-id"] || (req.headers["x-request-id"] ?? newId())));
}
