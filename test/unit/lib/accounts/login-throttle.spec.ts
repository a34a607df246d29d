/** Failed-login throttling (lib/accounts/login-throttle.ts), on the in-memory counters: attempts sent at once. */
import type { Logger } from "moleculer";
import { LoginThrottle, type LoginTicket } from "../../../../lib/accounts/login-throttle";

const LIMIT = 3;
const logger = { warn: () => undefined } as unknown as Logger;
const throttle = () => new LoginThrottle(null, { prefix: `t${Math.random()}`, limit: LIMIT }, logger);

/** Each attempt's check at once: the tickets of those let through, and the Retry-After of those refused. */
async function atOnce(t: LoginThrottle, n: number, address: string, login = "root") {
	const settled = await Promise.allSettled(Array.from({ length: n }, () => t.check(address, login)));
	const tickets: LoginTicket[] = settled.flatMap(s => (s.status === "fulfilled" ? [s.value] : []));
	const refused = settled.flatMap(s => (s.status === "rejected" ? [s.reason as { code: number; data: { headers: Record<string, string> } }] : []));
	return { tickets, refused };
}

it("lets no more attempts at one account than the limit be checked when they come at once, and blocks once", async () => {
	const t = throttle();
	const first = await atOnce(t, 8, "10.0.0.1");
	// Before, each read the count before any was counted: all 8 hashed a password.
	expect(first.tickets).toHaveLength(LIMIT);
	expect(first.refused.map(r => r.code)).toEqual(Array(8 - LIMIT).fill(429));
	await Promise.all(first.tickets.map(ticket => t.failed(ticket)));
	// Blocked for the first step (a minute), not pushed up the steps by every failure past the limit.
	const after = await atOnce(t, 1, "10.0.0.1", "someone-else");
	expect(after.refused.map(r => Number(r.data.headers["Retry-After"]))).toEqual([60]);
});

it("refuses nobody for signing in at once with others through one address (a NAT, a proxy)", async () => {
	const t = throttle();
	const settled = await Promise.allSettled(Array.from({ length: 8 * LIMIT }, (_, i) => t.check("10.0.0.2", `user${i}`)));
	expect(settled.filter(s => s.status === "rejected")).toHaveLength(0);
});

it("gives the account's point back when the password could not be checked, and ends its run on a sign-in", async () => {
	const t = throttle();
	for (let i = 0; i < 2 * LIMIT; i++) await t.released(await t.check(`10.0.4.${i}`, "carol"));
	for (let i = 0; i < LIMIT - 1; i++) await t.failed(await t.check(`10.0.5.${i}`, "carol"));
	await t.succeeded(await t.check("10.0.6.1", "carol"));
	const now = await atOnce(t, LIMIT, "10.0.6.2", "carol");
	expect([now.tickets.length, now.refused.length]).toEqual([LIMIT, 0]);
});

it("blocks an account after the limit from new addresses, not from one it signed in from", async () => {
	const t = throttle();
	await t.succeeded(await t.check("10.0.1.1", "alice"));
	for (let i = 0; i < LIMIT; i++) await t.failed(await t.check(`10.0.2.${i}`, "alice"));
	const stranger = await atOnce(t, 1, "10.0.3.1", "alice");
	expect(stranger.refused.map(r => r.code)).toEqual([429]);
	// The refusal cost the stranger's address nothing: it still has its whole budget.
	expect((await atOnce(t, LIMIT, "10.0.3.1", "bob")).tickets).toHaveLength(LIMIT);
	expect((await atOnce(t, 1, "10.0.1.1", "alice")).tickets).toHaveLength(1);
});
