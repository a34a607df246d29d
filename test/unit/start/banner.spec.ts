/** The banner `npm start` and `npm run start:cluster` print when they serve (lib/start/banner.ts). */
import { startBanner } from "../../../lib/start/banner";

const addresses = [
	"",
	"Gateway: http://localhost:3000/api/v3",
	"API v4:  http://localhost:3000/api/v4",
	"Docs:    http://localhost:3000/api/v3/docs (both versions; OpenAPI 3.1 at http://localhost:3000/api/v3/openapi.json)",
	"",
];

it("gives root's login, password and token with an export line on the start that created root", () => {
	expect(
		startBanner({ port: 3000, createdRoot: { password: "pw-0123456789", token: "AbCdEfGhIjKlMnOpQrSt" }, internalApiOn: true, stop: "Ctrl-C stops it." }),
	).toEqual([
		...addresses,
		"This start created root: login root, password pw-0123456789, private token AbCdEfGhIjKlMnOpQrSt (shown once; keep them). Ready to paste:",
		"  export T=AbCdEfGhIjKlMnOpQrSt",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:3000/api/v3/user',
		"Ctrl-C stops it.",
	]);
});

it("names the variables that chose root's credentials instead of showing them", () => {
	expect(startBanner({ port: 3000, createdRoot: { password: null, token: null }, internalApiOn: true, stop: "Ctrl-C stops it." })).toEqual([
		...addresses,
		"This start created root: login root, password from GITLAB_ROOT_PASSWORD, private token from GITLAB_ROOT_TOKEN " +
			"(shown once; keep them). Ready to paste:",
		"  export T=$GITLAB_ROOT_TOKEN",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:3000/api/v3/user',
		"Ctrl-C stops it.",
	]);
});

it("shows no token on a later start; lists the processes, more commands and an internal API that is off", () => {
	expect(
		startBanner({
			port: 8080,
			createdRoot: null,
			internalApiOn: false,
			details: ["  api  health http://localhost:3001/ready"],
			commands: ["npm run seed -- --token $T"],
			stop: "Ctrl-C stops every process.",
		}),
	).toEqual([
		"",
		"Gateway: http://localhost:8080/api/v3",
		"API v4:  http://localhost:8080/api/v4",
		"Docs:    http://localhost:8080/api/v3/docs (both versions; OpenAPI 3.1 at http://localhost:8080/api/v3/openapi.json)",
		"",
		"  api  health http://localhost:3001/ready",
		"",
		"root's private token is not shown again: the start that created root printed it. With it in T:",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:8080/api/v3/user',
		"  npm run seed -- --token $T",
		"The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.",
		"Ctrl-C stops every process.",
	]);
});
