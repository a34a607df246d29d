/** The banner `npm start` and `npm run start:cluster` print when they serve (lib/start/banner.ts): never a secret. */
import path from "path";
import { startBanner } from "../../../../lib/start/banner";

const addresses = [
	"",
	"Gateway: http://localhost:3000/api/v3",
	"API v4:  http://localhost:3000/api/v4",
	"Docs:    http://localhost:3000/api/v3/docs (both versions; OpenAPI 3.1 at http://localhost:3000/api/v3/openapi.json)",
	"",
];
const file = path.join(process.cwd(), "data/initial_root_credentials");

it("names the file of root's generated credentials on the start that created root, with a line that reads the token from it", () => {
	expect(
		startBanner({ port: 3000, createdRoot: { file, generatedPassword: true, generatedToken: true }, internalApiOn: true, stop: "Ctrl-C stops it." }),
	).toEqual([
		...addresses,
		"This start created root (login root); its generated password and private token are in data/initial_root_credentials " +
			"(yours only; keep them, then delete it). Ready to paste:",
		"  export T=$(sed -n 's/^Private token: //p' data/initial_root_credentials)",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:3000/api/v3/user',
		"Ctrl-C stops it.",
	]);
});

it("names the variables that chose root's credentials, and the file for the one generated", () => {
	expect(
		startBanner({
			port: 3000,
			createdRoot: { file: null, generatedPassword: false, generatedToken: false },
			internalApiOn: true,
			stop: "Ctrl-C stops it.",
		}),
	).toEqual([
		...addresses,
		"This start created root (login root) with GITLAB_ROOT_PASSWORD and GITLAB_ROOT_TOKEN. Ready to paste:",
		"  export T=$GITLAB_ROOT_TOKEN",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:3000/api/v3/user',
		"Ctrl-C stops it.",
	]);
	expect(
		startBanner({ port: 3000, createdRoot: { file, generatedPassword: true, generatedToken: false }, internalApiOn: true, stop: "Ctrl-C stops it." }).slice(
			5,
			7,
		),
	).toEqual([
		"This start created root (login root); its generated password is in data/initial_root_credentials (yours only; keep them, then delete it), " +
			"the rest is GITLAB_ROOT_TOKEN. Ready to paste:",
		"  export T=$GITLAB_ROOT_TOKEN",
	]);
});

it("names no credentials on a later start; lists the processes, more commands and an internal API that is off", () => {
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
		"root was created by an earlier start (what it generated went to initial_root_credentials in the data directory). With its token in T:",
		'  curl -H "PRIVATE-TOKEN: $T" http://localhost:8080/api/v3/user',
		"  npm run seed -- --token $T",
		"The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.",
		"Ctrl-C stops every process.",
	]);
});
