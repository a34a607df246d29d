import { AttemptsInFlight, type Attempt } from "../../../../lib/push/attempts-in-flight";

function deferred() {
	let resolve!: () => void;
	let reject!: (err: Error) => void;
	const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
	return { promise, resolve, reject };
}

const tick = () => new Promise(r => setImmediate(r));
/** A channel whose delivery count is exact (the in-process one). */
const exact = { trustsFirstDelivery: true };

describe("AttemptsInFlight", () => {
	afterEach(() => jest.useRealTimers());

	it("runs a redelivery that arrives while the first attempt runs here only after it, and never as a first one", async () => {
		const attempts = new AttemptsInFlight(5000, exact);
		const firstDone = deferred();
		const seen: string[] = [];
		let second: Attempt | undefined;
		const first = attempts.run("ev1", { info: { deliveryCount: 1 } }, async attempt => {
			seen.push(`first starts (surely first: ${attempt.surelyFirst()})`);
			await firstDone.promise;
			seen.push("first ends");
		});
		// Counted as a first delivery too (as JetStream may): having waited here is what makes it not first.
		const redelivery = attempts.run("ev1", { info: { deliveryCount: 1 } }, attempt => {
			second = attempt;
			seen.push("redelivery starts");
			return Promise.resolve();
		});
		await tick();
		expect(seen).toEqual(["first starts (surely first: true)"]);
		expect(attempts.size).toBe(1);
		firstDone.resolve();
		await Promise.all([first, redelivery]);
		expect(seen).toEqual(["first starts (surely first: true)", "first ends", "redelivery starts"]);
		expect(second?.surelyFirst()).toBe(false);
		expect(attempts.size).toBe(0);
	});

	it("runs the redelivery after an earlier attempt that failed, and each caller gets its own outcome", async () => {
		const attempts = new AttemptsInFlight(5000, exact);
		const firstDone = deferred();
		const first = attempts.run("ev1", { info: { deliveryCount: 1 } }, () => firstDone.promise);
		const redelivery = attempts.run("ev1", { info: { deliveryCount: 2 } }, () => Promise.resolve());
		firstDone.reject(new Error("peer down"));
		await expect(first).rejects.toThrow("peer down");
		await expect(redelivery).resolves.toBeUndefined();
		expect(attempts.size).toBe(0);
	});

	it("runs attempts of different events side by side", async () => {
		const attempts = new AttemptsInFlight(5000, exact);
		const held = deferred();
		const started: string[] = [];
		const a = attempts.run("a", { info: { deliveryCount: 1 } }, async () => {
			started.push("a");
			await held.promise;
		});
		const b = attempts.run("b", { info: { deliveryCount: 1 } }, () => {
			started.push("b");
			return Promise.resolve();
		});
		await b;
		expect(started).toEqual(["a", "b"]);
		held.resolve();
		await a;
	});

	it("stops counting a first attempt as surely first once half the ack wait has passed since its message arrived", async () => {
		jest.useFakeTimers({ now: 1_000_000 });
		const attempts = new AttemptsInFlight(6000, exact);
		const answers: boolean[] = [];
		const run = attempts.run("ev1", { info: { deliveryCount: 1 } }, async attempt => {
			answers.push(attempt.surelyFirst());
			await new Promise(r => setTimeout(r, 3000));
			answers.push(attempt.surelyFirst());
			await new Promise(r => setTimeout(r, 1));
			answers.push(attempt.surelyFirst());
		});
		await jest.advanceTimersByTimeAsync(3001);
		await run;
		expect(answers).toEqual([true, true, false]);
	});

	it("counts no attempt as first when the channel gives no delivery count (Redis Streams)", async () => {
		const attempts = new AttemptsInFlight(5000, exact);
		let seen: Attempt | undefined;
		await attempts.run("ev1", undefined, attempt => {
			seen = attempt;
			return Promise.resolve();
		});
		expect(seen?.surelyFirst()).toBe(false);
	});

	it("makes no attempt a first one on a channel whose count may restart at 1 (JetStream)", async () => {
		const attempts = new AttemptsInFlight(5000, { trustsFirstDelivery: false });
		let seen: Attempt | undefined;
		await attempts.run("ev1", { info: { deliveryCount: 1 } }, attempt => {
			seen = attempt;
			return Promise.resolve();
		});
		expect(seen?.surelyFirst()).toBe(false);
	});
});
