import type { RouteTable } from "./types";

export const eventsRoutes: RouteTable = {
	internal: {
		"POST /push": "events.push",
		"GET /dead-letters": "events.deadLetters",
		"POST /dead-letters/:id/replay": "events.replay",
	},
};
