/**
 * The access look-up (`accounts.projectAccess`) is guarded by its project's write generation
 * (lib/accounts/auth-cache.ts): a look-up that read a membership before it was removed cannot
 * store the old level after the removal, however slow it is, on the memory cacher of the
 * all-in-one and on the Redis cacher of the split services. Before, only the delete repeated a
 * second later stood in its way.
 */
import { Cachers } from "moleculer";
import { CacheReads } from "../../../lib/cache/cache-reads";
import { PROJECT_ACCESS } from "../../../lib/accounts/auth-cache";
import { ResilientCacheMiddleware } from "../../../middlewares/resilient-cache.middleware";
import { RECLEAN_DELAY_MS } from "../../../lib/cache/cleaning";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser } from "../../support/fixtures";
import { client } from "../../support/http";
import { heldAcross } from "../../support/races";
import { REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

beforeAll(() => requireServers("redis"));

describe.each([
	["memory", () => ({ type: "MemoryLRU", options: { max: 1000 } })],
	["redis", () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("access-gen") } })],
])("%s cacher", (_kind, cacher) => {
	let stack: LocalStack;
	const as = (token: string) => client(stack.url, token);

	beforeAll(async () => {
		stack = await startLocal([ApiService, AccountsService], { cacher: cacher() as never, middlewares: [ResilientCacheMiddleware()] });
	});
	afterAll(async () => {
		if (!(stack?.broker.cacher instanceof Cachers.MemoryLRU)) await stack?.broker.cacher?.clean();
		await stack?.stop();
	});

	it("a look-up slower than the removal of the member does not cache the member's old level", async () => {
		const owner = await createUser(stack.api());
		const dev = await createUser(stack.api());
		const project = await createProject(as(owner.token));
		await addMember(as(owner.token), project.id, dev.id, 30);
		const params = { project: String(project.id), userId: dev.id, admin: false };

		// The look-up reads the membership, then waits while the member is removed and the
		// delayed second delete has run: only the generation can stop its store now.
		const [before] = await heldAcross(
			stack.broker,
			"accounts",
			"members",
			() => stack.broker.call<{ level: number }, object>(PROJECT_ACCESS.action, params),
			async () => {
				expect((await as(owner.token).del(`/projects/${project.id}/members/${dev.id}`)).status).toBe(200);
				await new Promise(resolve => setTimeout(resolve, RECLEAN_DELAY_MS + 300));
			},
		);
		expect(before.level).toBe(30);
		// Its store was tried before its answer came back (see write-generations.spec.ts).

		const reads = new CacheReads(stack.broker.cacher as never);
		expect(await reads.read({ name: PROJECT_ACCESS.action, cache: PROJECT_ACCESS.cache }, params, {})).toBeUndefined();
		// The removed member reads the private project no more.
		expect((await as(dev.token).get(`/projects/${project.id}/members`)).status).toBe(404);
		// A look-up that began after the change is cached as usual.
		await expect(stack.broker.call(PROJECT_ACCESS.action, params)).rejects.toMatchObject({ code: 404 });
		const kept = await stack.broker.call<{ level: number }, object>(PROJECT_ACCESS.action, { ...params, userId: owner.id });
		expect(await reads.read({ name: PROJECT_ACCESS.action, cache: PROJECT_ACCESS.cache }, { ...params, userId: owner.id }, {})).toEqual(kept);
	});
});
