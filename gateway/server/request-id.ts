/**
 * A request's id, named once and read by everything that tells it: the `X-Request-ID` of the
 * answer, the context moleculer-web makes (its `rootCallOptions`), the request's span and the
 * `correlation_id` of its log lines in every process (docs/operations.md#correlation-ids), and the
 * log line of a failure (gateway/server/guarded-entry.ts). The client's `X-Correlation-ID`, else its
 * `X-Request-ID` (as moleculer-web reads them), when it is a sane id; otherwise a new id.
 */
import type { IncomingMessage } from "http";

/** A request id a client may choose: printable ASCII without spaces, at most this long (else a new one is made). */
export const MAX_REQUEST_ID_LENGTH = 128;
const ACCEPTED_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_REQUEST_ID_LENGTH}}$`);

const ID = Symbol("request id");

export function requestIdOf(req: IncomingMessage, newId: () => string): string {
	const named = req as IncomingMessage & { [ID]?: string };
	return (named[ID] ??= clientsId(req) ?? newId());
}

/** The id the client named the request by, if it is one a log line and a header can carry as it is. */
function clientsId(req: IncomingMessage): string | undefined {
	const given = req.headers["x-correlation-id"] || req.headers["x-request-id"];
	return typeof given === "string" && ACCEPTED_ID.test(given) ? given : undefined;
}
