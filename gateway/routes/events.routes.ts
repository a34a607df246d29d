import { arrayOf, boolean, integer, nullable, object, oneValue, string } from "../../presenters/json-schema";
import { PUSH_PAYLOAD_SCHEMA } from "../../lib/push/payload";
import { accepted, ok } from "./answers";
import type { RouteTable } from "./types";

/** What a worker gave up on (lib/push/dead-letters.ts), and whether a replay would take it. */
const DEAD_LETTER = object(
	{
		id: string,
		group: string,
		channel: string,
		event_id: nullable(string),
		project_id: nullable(integer),
		ref: nullable(string),
		received_at: nullable(string),
		error: nullable(string),
		replayable: boolean,
	},
	"DeadLetter",
);

export const eventsRoutes: RouteTable = {
	internal: {
		"POST /push": "events.push",
		"GET /dead-letters": "events.deadLetters",
		"POST /dead-letters/:id/replay": "events.replay",
	},
	answers: {
		// total_commits_count below the commits sent: 400.
		"POST /push": { ...accepted(object({ id: string }, "PushAccepted")), 400: "RuleRefusal" },
		"GET /dead-letters": ok(arrayOf(DEAD_LETTER)),
		// A letter too old to replay: 409.
		"POST /dead-letters/:id/replay": { ...ok(object({ id: string, group: string, replayed: oneValue(true) }, "Replayed")), 409: "Conflict" },
	},
	// The git side's payload is read by lib/push/payload.ts, which declares it.
	takes: { "POST /push": PUSH_PAYLOAD_SCHEMA },
};
