import { withoutFirstWorking } from "../../../middlewares/channels.middleware";

/** A JetStream message as nats.js shapes it: the wire message inside, state on the instance, getters over both. */
class FakeJsMsg {
	didAck = false;
	constructor(readonly msg: { seq: number; data: string; sent: string[] }) {}
	get seq() {
		return this.msg.seq;
	}
	get data() {
		return this.msg.data;
	}
	working() {
		this.msg.sent.push("+WPI");
	}
	ack() {
		if (!this.didAck) this.msg.sent.push("+ACK");
		this.didAck = true;
	}
}

describe("withoutFirstWorking", () => {
	it("drops the adapter's first working signal and passes every later one", () => {
		const wire = { seq: 7, data: "payload", sent: [] as string[] };
		const view = withoutFirstWorking(new FakeJsMsg(wire));
		view.working();
		expect(wire.sent).toEqual([]);
		view.working();
		view.working();
		expect(wire.sent).toEqual(["+WPI", "+WPI"]);
	});

	it("reads the message and acknowledges it once, like the message itself", () => {
		const wire = { seq: 7, data: "payload", sent: [] as string[] };
		const view = withoutFirstWorking(new FakeJsMsg(wire));
		expect([view.seq, view.data]).toEqual([7, "payload"]);
		view.ack();
		view.ack();
		expect(wire.sent).toEqual(["+ACK"]);
	});

	it("leaves a missing message as it is", () => {
		expect(withoutFirstWorking(null)).toBeNull();
	});
});
