import { ServiceBroker } from "moleculer";
import { cleanTwice, deleteTwice, projectCachePatterns, RECLEAN_DELAY_MS } from "../../../../lib/cache/cleaning";
import { waitFor } from "../../../support/http";

const broker = new ServiceBroker({ logger: false, cacher: "Memory" });
beforeAll(() => broker.start());
afterAll(() => broker.stop());

const has = async (key: string) => (await broker.cacher!.get(key)) != null;

describe("project cache patterns", () => {
	it("clean one project's entries of one service and nothing else", async () => {
		const cacher = broker.cacher!;
		for (const key of ['labels.list:"4"', 'labels.list:"4"|1|20', 'labels.list:"40"', 'labels.get:"5"|"x"', 'builds.list:"4"']) await cacher.set(key, [1]);
		await cacher.clean(projectCachePatterns("labels", 4));
		expect([
			await has('labels.list:"4"'),
			await has('labels.list:"4"|1|20'),
			await has('labels.list:"40"'),
			await has('labels.get:"5"|"x"'),
			await has('builds.list:"4"'),
		]).toEqual([false, false, true, true, true]);
	});
});

describe("cleanTwice", () => {
	it("also removes an answer stored just after the first clean (a read that raced the write)", async () => {
		const key = 'snippets.list:"9"|1';
		await broker.cacher!.set(key, ["before the write"]);
		await cleanTwice(broker, projectCachePatterns("snippets", 9), "test");
		expect(await has(key)).toBe(false);
		await broker.cacher!.set(key, ["stale: computed before the write, stored after the clean"]);
		await waitFor("the second clean", async () => !(await has(key)), RECLEAN_DELAY_MS * 5, 50);
	});

	it("does nothing without a cacher", async () => {
		const bare = new ServiceBroker({ logger: false });
		await expect(cleanTwice(bare, ["x:**"], "test")).resolves.toBeUndefined();
	});
});

describe("deleteTwice", () => {
	it("deletes exact keys with the cacher's del, never its clean, and once more a moment later", async () => {
		const key = 'accounts.projectAccess:"9"|3|false';
		await broker.cacher!.set(key, { level: 30 });
		const cleans = jest.spyOn(broker.cacher!, "clean");
		try {
			await deleteTwice(broker, [key], "test");
			expect(await has(key)).toBe(false);
			await broker.cacher!.set(key, { level: 30 });
			await waitFor("the second delete", async () => !(await has(key)), RECLEAN_DELAY_MS * 5, 50);
			expect(cleans).not.toHaveBeenCalled();
		} finally {
			cleans.mockRestore();
		}
	});
});
