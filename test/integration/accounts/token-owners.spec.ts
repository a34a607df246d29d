/**
 * The token owners a gateway keeps (gateway/edge/auth.ts) go when a change of access cleans the cached
 * look-ups: the gateway's two handlers of ACCESS_CHANGED_EVENT (its mixins) both run.
 */
import { ServiceBroker, type Service } from "moleculer";
import type { RecentTokens } from "../../../gateway/edge/auth";
import { ACCESS_CHANGED_EVENT } from "../../../lib/accounts/auth-cache";
import { AccessCacheMixin } from "../../../mixins/cache.mixin";
import { GatewayCallerMixin } from "../../../gateway/caller.mixin";
import { waitFor } from "../../support/http";

const broker = new ServiceBroker({ logger: false, cacher: { type: "MemoryLRU", options: { max: 100 } } });
const gateway = broker.createService({ name: "gateway", mixins: [GatewayCallerMixin(), AccessCacheMixin()] }) as Service & { recentTokens: RecentTokens };
const owner = { id: 7, username: "jane", is_admin: false };

beforeAll(() => broker.start());
afterAll(() => broker.stop());

it("forgets the owners a change names, and every one with the cached look-ups when it names none", async () => {
	const recent = gateway.recentTokens;
	const [a, b] = ["token-a-000000000000", "token-b-000000000000"].map(t => recent.lookup(t));
	for (const found of [a, b]) recent.keepOwner(found, owner);
	await broker.cacher!.set(b.key!, owner);

	await broker.broadcast(ACCESS_CHANGED_EVENT, { keys: [a.key] });
	await waitFor("a's owner to go", () => recent.ownerOf(a) === undefined, 5000, 10);
	expect(recent.ownerOf(b)).toBe(owner);

	await broker.broadcast(ACCESS_CHANGED_EVENT, {});
	await waitFor("b's owner to go", () => recent.ownerOf(b) === undefined, 5000, 10);
	// The other handler cleaned the shared entries as it always did.
	await waitFor("b's cached look-up to go", async () => (await broker.cacher!.get(b.key!)) == null, 5000, 10);
});
