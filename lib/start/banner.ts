/**
 * What a start prints once it serves: where, the reference page, and on the start that created
 * root, root's credentials with lines ready to paste (README, "Run it"). `npm start` prints it from
 * the broker's `started` hook (moleculer.config.ts), `npm run start:cluster` from its launcher.
 */
import type { AddressInfo } from "net";
import type { ServiceBroker } from "moleculer";

/** root's credentials as the start that created it knows them; null for one set by GITLAB_ROOT_PASSWORD / GITLAB_ROOT_TOKEN. */
export interface RootCredentials {
	password: string | null;
	token: string | null;
}

export interface BannerFacts {
	/** The gateway's port. */
	port: number;
	/** root's credentials, when this start created root. */
	createdRoot: RootCredentials | null;
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
	if (root)
		lines.push(
			`This start created root: login root, password ${root.password ?? "from GITLAB_ROOT_PASSWORD"}, ` +
				`private token ${root.token ?? "from GITLAB_ROOT_TOKEN"} (shown once; keep them). Ready to paste:`,
			`  export T=${root.token ?? "$GITLAB_ROOT_TOKEN"}`,
		);
	else lines.push("root's private token is not shown again: the start that created root printed it. With it in T:");
	lines.push(`  curl -H "PRIVATE-TOKEN: $T" ${v3}/user`, ...(facts.commands ?? []).map(command => `  ${command}`));
	if (!facts.internalApiOn) lines.push("The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.");
	lines.push(facts.stop);
	return lines;
}

/** What the banner reads of the local gateway and accounts services. */
interface Gateway {
	server?: { address(): AddressInfo | string | null };
}
interface Accounts {
	createdRoot: RootCredentials | null;
}

/**
 * `npm start`'s banner, once every service has started, when this process holds the gateway and
 * the accounts (every service in one process). Accounts forgets root's credentials once shown.
 */
export function printStartBanner(broker: ServiceBroker, internalApiOn: boolean): void {
	const gateway = broker.getLocalService("api") as unknown as Gateway | undefined;
	const accounts = broker.getLocalService("accounts") as unknown as Accounts | undefined;
	const address = gateway?.server?.address();
	if (!accounts || !address || typeof address === "string") return;
	console.log(startBanner({ port: address.port, createdRoot: accounts.createdRoot, internalApiOn, stop: "Ctrl-C stops it." }).join("\n"));
	accounts.createdRoot = null;
}
