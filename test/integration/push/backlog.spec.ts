/**
 * A worker group's backlog read from the real JetStream (lib/push/backlog.ts): the events its
 * durable consumer has not delivered plus those not yet acknowledged, per group.
 */
import { connect, type NatsConnection } from "nats";
import { backlogOf, readBacklog } from "../../../lib/push/backlog";
import { PUSH_GROUPS, pushNames } from "../../../lib/push/channel";
import { deleteJetStreamPush, provisionJetStream } from "../../../lib/push/provisioning";
import { NATS_URL, uniqueNamespace } from "../../support/servers";

const prefix = uniqueNamespace("backlog");
const names = pushNames(prefix);
let nc: NatsConnection;

beforeAll(async () => {
	await provisionJetStream(NATS_URL, { prefix, maxInFlight: 4, ackWaitMs: 5000 });
	nc = await connect({ servers: new URL(NATS_URL).host });
});
afterAll(async () => {
	await nc.close();
	await deleteJetStreamPush(NATS_URL, prefix);
});

it("adds what is not yet delivered and what is not yet acknowledged", () => {
	expect(backlogOf({ num_pending: 7, num_ack_pending: 3 })).toBe(10);
});

it("is every event published since the group's consumer was made, for each group, until it is consumed", async () => {
	const jsm = await nc.jetstreamManager();
	for (const group of PUSH_GROUPS) expect([group, await readBacklog(jsm, names.stream, group)]).toEqual([group, 0]);
	const js = nc.jetstream();
	for (let i = 0; i < 3; i++) await js.publish(names.channel, new TextEncoder().encode(`{"id":"e${i}"}`));
	for (const group of PUSH_GROUPS) expect([group, await readBacklog(jsm, names.stream, group)]).toEqual([group, 3]);
	await expect(readBacklog(jsm, names.stream, "no-such-group")).rejects.toThrow(/consumer not found/);
});
