/**
 * A cached read that began before a write cannot store its old answer after it, however long its
 * remote part takes (lib/cache/write-generations.ts): the real snippets service, whose read calls
 * `accounts.usersByIds` (here a stand-in that blocks until released), on the memory cacher of the
 * all-in-one and on the Redis cacher shared by split services; and the gateway's own cache read.
 */
import { ServiceBroker, type Context } from "moleculer";
import { CacheReads } from "../../../lib/cache/cache-reads";
import { Visibility } from "../../../lib/accounts/access";
import { ResilientCacheMiddleware } from "../../../middlewares/resilient-cache.middleware";
import { RECLEAN_DELAY_MS } from "../../../lib/cache/cleaning";
import SnippetsService from "../../../services/snippets.service";
import { waitFor } from "../../support/http";
import { REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

beforeAll(() => requireServers("redis"));

/** accounts.usersByIds, held while `gate` is set: the slow remote part of a snippet read. */
let gate: Promise<void> | null = null;
let blocked = 0;
const accounts = {
	name: "accounts",
	actions: {
		async usersByIds(ctx: Context<{ ids: number[] }>) {
			if (gate) {
				blocked++;
				await gate;
			}
			return ctx.params.ids.map(id => ({ id, username: `user${id}`, name: `User ${id}`, state: "active", email: `u${id}@example.com` }));
		},
	},
};

describe.each([
	["memory", 4101, () => ({ type: "MemoryLRU", options: { max: 1000 } })],
	["redis", 4102, () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("write-gen") } })],
])("%s cacher", (_kind, projectId, cacher) => {
	const broker = new ServiceBroker({ logger: false, cacher: cacher() as never, middlewares: [ResilientCacheMiddleware()] });
	broker.createService(accounts);
	broker.createService(SnippetsService);
	const reads = new CacheReads(broker.cacher as never);
	const project = { id: projectId, path_with_namespace: `root/p${projectId}`, visibility_level: Visibility.PUBLIC, public_builds: true, creator_id: 1 };
	const author = { id: 1, username: "root", is_admin: true };
	const asAuthor = { user: author, access: { project, level: 50, admin: true }, projectKey: String(projectId) };
	const anonymous = { access: { project, level: 0, admin: false }, projectKey: String(projectId) };
	const listDeclaration = () => broker.registry.getActionList({}).find(a => a.name === "snippets.list")!.action as never;

	beforeAll(() => broker.start());
	afterAll(async () => {
		await broker.cacher!.clean();
		await broker.stop();
	});

	it("a slow read that began before a snippet was made private does not cache the public answer", async () => {
		const params = { id: String(projectId) };
		const fields = { title: "t", file_name: "a.txt", code: "x", visibility_level: Visibility.PUBLIC };
		const snippet = await broker.call<{ id: number }, object>("snippets.create", { ...params, ...fields }, { meta: asAuthor });

		let release!: () => void;
		gate = new Promise(resolve => (release = resolve));
		blocked = 0;
		// Read the public snippet from the store, then wait in accounts.
		const racing = broker.call<{ rows: unknown[] }, object>("snippets.list", params, { meta: anonymous });
		await waitFor("the read to reach accounts", () => Promise.resolve(blocked === 1), 5000, 5);

		gate = null;
		await broker.call("snippets.update", { ...params, snippet_id: String(snippet.id), visibility_level: Visibility.PRIVATE }, { meta: asAuthor });
		// Past any delayed re-clean: only the generation can stop the old answer now.
		await new Promise(resolve => setTimeout(resolve, RECLEAN_DELAY_MS + 300));
		release();
		expect((await racing).rows).toHaveLength(1);
		// Its store was tried before its answer came back (in memory at once; on Redis as a command
		// sent ahead of the look-ups below on the same connection), so what follows sees its outcome.

		const cached = (await reads.read(listDeclaration(), params, anonymous)) as { rows: unknown[] } | undefined;
		expect(cached?.rows ?? []).toHaveLength(0);
		const next = await broker.call<{ rows: unknown[] }, object>("snippets.list", params, { meta: anonymous });
		expect(next.rows).toHaveLength(0);
		// A read that began after the write is cached as usual.
		expect(await reads.read(listDeclaration(), params, anonymous)).toEqual(next);
	});

	it("caches the pages that exist, and no page past the end or in a second spelling", async () => {
		const params = { id: String(projectId) };
		const cachedAfter = async (query: object) => {
			// Stored (or not) before the answer came back, as above.
			await broker.call("snippets.list", { ...params, ...query }, { meta: asAuthor });
			return (await reads.read(listDeclaration(), { ...params, ...query }, asAuthor)) !== undefined;
		};
		expect(await cachedAfter({ page: 1, per_page: 20 })).toBe(true);
		expect(await cachedAfter({})).toBe(true);
		expect(await cachedAfter({ page: 2, per_page: 20 })).toBe(false);
		expect(await cachedAfter({ page: 123456789 })).toBe(false);
		expect(await cachedAfter({ page: -3 })).toBe(false);
		expect(await cachedAfter({ per_page: 1000 })).toBe(false);
	});
});
