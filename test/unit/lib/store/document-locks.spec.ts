import { DocumentLocks } from "../../../../lib/store/document-locks";

/** A write that runs until the test lets it finish, recording when it started and ended. */
function gate(log: string[], name: string) {
	let open!: () => void;
	const opened = new Promise<void>(resolve => (open = resolve));
	return {
		write: async () => {
			log.push(`${name} start`);
			await opened;
			log.push(`${name} end`);
			return name;
		},
		open: () => open(),
	};
}

const tick = () => new Promise(resolve => setImmediate(resolve));

describe("DocumentLocks", () => {
	it("runs the writes to one document one after another, and writes to others beside them", async () => {
		const locks = new DocumentLocks();
		const log: string[] = [];
		const [a1, a2, b] = [gate(log, "a1"), gate(log, "a2"), gate(log, "b")];
		const results = [locks.run(1, a1.write), locks.run(1, a2.write), locks.run(2, b.write)];
		await tick();
		expect(log).toEqual(["a1 start", "b start"]);
		a1.open();
		await tick();
		expect(log).toEqual(["a1 start", "b start", "a1 end", "a2 start"]);
		a2.open();
		b.open();
		expect(await Promise.all(results)).toEqual(["a1", "a2", "b"]);
	});

	it("runs a write that names no single document alone: after every earlier write, before every later one", async () => {
		const locks = new DocumentLocks();
		const log: string[] = [];
		const [a, all, b] = [gate(log, "a"), gate(log, "all"), gate(log, "b")];
		const results = [locks.run(1, a.write), locks.run({ $in: [1, 2] }, all.write), locks.run(2, b.write)];
		await tick();
		expect(log).toEqual(["a start"]);
		a.open();
		await tick();
		expect(log).toEqual(["a start", "a end", "all start"]);
		all.open();
		await tick();
		expect(log).toEqual(["a start", "a end", "all start", "all end", "b start"]);
		b.open();
		expect(await Promise.all(results)).toEqual(["a", "all", "b"]);
	});

	it("goes on after a write that failed, which fails for its caller only", async () => {
		const locks = new DocumentLocks();
		const failed = locks.run(1, () => Promise.reject(new Error("refused")));
		const next = locks.run(1, () => Promise.resolve("next"));
		await expect(failed).rejects.toThrow("refused");
		await expect(next).resolves.toBe("next");
	});
});
