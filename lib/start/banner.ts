/**
 * What a start prints once it serves: where, the reference page, and on the start that created
 * root, where its generated credentials are, with lines ready to paste (README, "Run it"); never a
 * secret. `npm start` prints it from the broker's `started` hook (moleculer.config.ts),
 * `npm run start:cluster` from its launcher.
 */
import type { AddressInfo } from "net";
import type { ServiceBroker } from "moleculer";
import { exportTokenLine, shownPath, type CreatedRoot } from "../accounts/root-credentials";

export interface BannerFacts {
	/** The gateway's port. */
	port: number;
	/** When this start created root: where its generated credentials are. */
	createdRoot: CreatedRoot | null;
	internalApiOn: boolean;
	/** Lines after the addresses (start:cluster's processes). */
	details?: string[];
	/** Commands to paste after the first request (they may use $T). */
	commands?: string[];
	/** The last line: how to stop. */
	stop: string;
}

/** The banner's lines. */
export function startBanner(facts: BannerFacts): string[] {
	const origin = `http://localhost:${facts.port}`;
	const v3 = `${origin}/api/v3`;
	const lines = [
		"",
		`Gateway: ${v3}`,
		`API v4:  ${origin}/api/v4`,
		`Docs:    ${v3}/docs (both versions; OpenAPI 3.1 at ${v3}/openapi.json)`,
		"",
		...(facts.details?.length ? [...facts.details, ""] : []),
	];
	const root = facts.createdRoot;
	if (root) lines.push(`This start created root (login root)${whereCredentials(root)}. Ready to paste:`, `  ${exportTokenLine(root)}`);
	else lines.push("root was created by an earlier start (what it generated went to initial_root_credentials in the data directory). With its token in T:");
	lines.push(`  curl -H "PRIVATE-TOKEN: $T" ${v3}/user`, ...(facts.commands ?? []).map(command => `  ${command}`));
	if (!facts.internalApiOn) lines.push("The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.");
	lines.push(facts.stop);
	return lines;
}

/** Where root's password and token came from, or went. */
function whereCredentials(root: CreatedRoot): string {
	const chosen = [!root.generatedPassword && "GITLAB_ROOT_PASSWORD", !root.generatedToken && "GITLAB_ROOT_TOKEN"].filter(Boolean).join(" and ");
	if (!root.file) return ` with ${chosen}`;
	const generated =
		root.generatedPassword && root.generatedToken ? "password and private token are" : `${root.generatedPassword ? "password" : "private token"} is`;
	return `; its generated ${generated} in ${shownPath(root.file)} (yours only; keep them, then delete it)${chosen ? `, the rest is ${chosen}` : ""}`;
}

/** What the banner reads of the local gateway and accounts services. */
interface Gateway {
	server?: { address(): AddressInfo | string | null };
}
interface Accounts {
	createdRoot: CreatedRoot | null;
}

/**
 * `npm start`'s banner, once every service has started, when this process holds the gateway and
 * the accounts (every service in one process). Accounts forgets the created root once shown.
 */
export function printStartBanner(broker: ServiceBroker, internalApiOn: boolean): void {
	const gateway = broker.getLocalService("api") as unknown as Gateway | undefined;
	const accounts = broker.getLocalService("accounts") as unknown as Accounts | undefined;
	const address = gateway?.server?.address();
	if (!accounts || !address || typeof address === "string") return;
	console.log(startBanner({ port: address.port, createdRoot: accounts.createdRoot, internalApiOn, stop: "Ctrl-C stops it." }).join("\n"));
	accounts.createdRoot = null;
}
