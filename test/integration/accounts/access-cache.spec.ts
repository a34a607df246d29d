/**
 * A membership change cleans exactly that member's cached access to that project, on the
 * Memory cacher of the all-in-one and on the real Redis cacher shared by split services: by
 * deleting the exact keys (on Redis one DEL, never a SCAN of the whole keyspace), here and on
 * every node that hears the change.
 */
import { ServiceBroker } from "moleculer";
import { ACCESS_CHANGED_EVENT, lookupCacheKey, memberAccessKeys, PROJECT_ACCESS, RESOLVE_TOKEN } from "../../../lib/accounts/auth-cache";
import { ResilientCacheMiddleware } from "../../../middlewares/resilient-cache.middleware";
import { AccessCacheMixin } from "../../../mixins/cache.mixin";
import { Members } from "../../../services/modules/accounts/members";
import { REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { waitFor } from "../../support/http";

beforeAll(() => requireServers("redis"));

describe.each([
	["memory", () => "Memory" as const],
	["redis", () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("access-cache") } })],
])("%s cacher", (_kind, cacher) => {
	const broker = new ServiceBroker({ logger: false, cacher: cacher() as never, middlewares: [ResilientCacheMiddleware()] });
	// A gateway's (or a replica's) listener, on the same cacher.
	broker.createService({ name: "gateway-like", mixins: [AccessCacheMixin()] });
	beforeAll(async () => {
		await broker.start();
		// Commands sent before Redis answers are refused (no offline queue) and degrade the cache.
		const client = (broker.cacher as unknown as { client?: { status: string } }).client;
		if (client) await waitFor("the cacher's Redis", () => client.status === "ready" && broker.cacher!.connected !== false, 10000, 20);
	});
	afterAll(async () => {
		await broker.cacher!.clean();
		await broker.stop();
	});

	const access = (project: string, userId: number, admin = false) => lookupCacheKey(broker.cacher!, PROJECT_ACCESS, { project, userId, admin });
	const token = lookupCacheKey(broker.cacher!, RESOLVE_TOKEN, { tokenHash: "a".repeat(64) });

	it("drops the member's entries under the project's id and path, and keeps everyone else's", async () => {
		const stale = [access("5", 7), access("5", 7, true), access("root/my.demo", 7)];
		const kept = [access("5", 8), access("6", 7), access("root/my.demo", 70), access("50", 7), access("root/other", 7), token];
		for (const key of [...stale, ...kept]) await broker.cacher!.set(key, { level: 30 });

		await broker.cacher!.clean(memberAccessKeys(broker.cacher!, { id: 5, path_with_namespace: "Root/My.Demo" }, 7));

		const present = async (keys: string[]) => Promise.all(keys.map(async key => (await broker.cacher!.get(key)) != null));
		expect(await present(stale)).toEqual([false, false, false]);
		expect(await present(kept)).toEqual(kept.map(() => true));
	});

	it("a member change deletes that member's exact keys, here and where the change is heard, without scanning the keyspace", async () => {
		const project = { id: 6, path_with_namespace: "Root/Six" };
		const stale = [access("6", 9), access("6", 9, true), access("root/six", 9), access("root/six", 9, true)];
		const kept = [access("6", 10), access("root/six", 90), token];
		for (const key of [...stale, ...kept]) await broker.cacher!.set(key, { level: 30 });

		// Every command sent to Redis, by name (the memory cacher has no client).
		const client = (broker.cacher as unknown as { client?: { sendCommand(cmd: { name: string }): unknown } }).client;
		const commands: string[] = [];
		if (client) {
			const send = client.sendCommand.bind(client);
			client.sendCommand = (cmd: { name: string }) => (commands.push(cmd.name.toLowerCase()), send(cmd));
		}
		const cleans = jest.spyOn(broker.cacher!, "clean");
		const broadcasts: [string, unknown][] = [];
		const ctx = { broadcast: (event: string, payload: unknown) => (broadcasts.push([event, payload]), Promise.resolve()) };
		const memberChanged = Members.methods!.memberChanged as (ctx: unknown, access: unknown, userId: number) => Promise<void>;
		try {
			await memberChanged.call({ broker }, ctx, { project }, 9);
			expect(broadcasts).toHaveLength(1);
			const [event, change] = broadcasts[0];
			expect(event).toBe(ACCESS_CHANGED_EVENT);
			// What a gateway does when it hears the change.
			await broker.broadcastLocal(event, change);
			expect(cleans).not.toHaveBeenCalled();
			if (client) {
				expect(commands.filter(c => c === "scan")).toEqual([]);
				expect(commands).toContain("del");
			}
		} finally {
			cleans.mockRestore();
		}

		const present = async (keys: string[]) => Promise.all(keys.map(async key => (await broker.cacher!.get(key)) != null));
		expect(await present(stale)).toEqual(stale.map(() => false));
		expect(await present(kept)).toEqual(kept.map(() => true));
	});
});
