/**
 * A membership change cleans exactly that member's cached access to that project, on the
 * Memory cacher of the all-in-one and on the real Redis cacher shared by split services.
 */
import { ServiceBroker } from "moleculer";
import { lookupCacheKey, memberAccessKeys, PROJECT_ACCESS, RESOLVE_TOKEN } from "../../lib/accounts/auth-cache";
import { REDIS_URL, requireServers, uniqueNamespace } from "../support/servers";

beforeAll(() => requireServers("redis"));

describe.each([
	["memory", () => "Memory" as const],
	["redis", () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("access-cache") } })],
])("%s cacher", (_kind, cacher) => {
	const broker = new ServiceBroker({ logger: false, cacher: cacher() as never });
	beforeAll(() => broker.start());
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
});
