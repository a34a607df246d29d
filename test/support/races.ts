/**
 * Two requests changing one thing at once, as two replicas would run them: the first is held right
 * after one of its steps (by default its look-up: the service's next `findOne` on a collection)
 * while the second one runs.
 */
import type { ServiceBroker } from "moleculer";

type Step = "findOne" | "insert";
type Store = Record<Step, (arg: object) => Promise<unknown>>;

/** Runs `first` with `service`'s next `step` on `collection` held until `second` has finished; both results. */
export async function heldAcross<A, B>(
	broker: ServiceBroker,
	service: string,
	collection: string,
	first: () => Promise<A>,
	second: () => Promise<B>,
	step: Step = "findOne",
): Promise<[A, B]> {
	const store = (broker.getLocalService(service) as unknown as { db: Record<string, Store> }).db[collection];
	const realStep = store[step].bind(store);
	const own = Object.getOwnPropertyDescriptor(store, step);
	let read!: () => void;
	const hasRead = new Promise<void>(resolve => (read = resolve));
	let release!: () => void;
	const held = new Promise<void>(resolve => (release = resolve));
	// Held once; every later call goes straight through (plain code: the bench's build compiles this folder without jest).
	let holding = true;
	store[step] = async (arg: object) => {
		const doc = await realStep(arg);
		if (holding) {
			holding = false;
			read();
			await held;
		}
		return doc;
	};
	try {
		const firstDone = first();
		await hasRead;
		const secondResult = await second();
		release();
		return [await firstDone, secondResult];
	} finally {
		release();
		if (own) Object.defineProperty(store, step, own);
		else delete (store as Partial<Store>)[step];
	}
}

/**
 * Runs `run` with `service`'s store writes named `collection.method` (`"members.insert"`) failing,
 * as a full disk or a lost primary makes them fail; its result, the writes restored.
 */
export async function whileFailing<T>(broker: ServiceBroker, service: string, writes: string[], run: () => Promise<T>): Promise<T> {
	const db = (broker.getLocalService(service) as unknown as { db: Record<string, Record<string, unknown>> }).db;
	const real = writes.map(at => {
		const [collection, method] = at.split(".");
		return { store: db[collection], method, own: Object.getOwnPropertyDescriptor(db[collection], method) };
	});
	for (const { store, method } of real) store[method] = () => Promise.reject(new Error("disk full"));
	try {
		return await run();
	} finally {
		for (const { store, method, own } of real) {
			if (own) Object.defineProperty(store, method, own);
			else delete store[method];
		}
	}
}
