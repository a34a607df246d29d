/**
 * Two requests changing one thing at once, as two replicas would run them: the first is held right
 * after its look-up (the service's next `findOne` on a collection) while the second one runs.
 */
import type { ServiceBroker } from "moleculer";

interface Store {
	findOne(query: object): Promise<unknown>;
}

/** Runs `first` with `service`'s next `findOne` on `collection` held until `second` has finished; both results. */
export async function heldAcross<A, B>(
	broker: ServiceBroker,
	service: string,
	collection: string,
	first: () => Promise<A>,
	second: () => Promise<B>,
): Promise<[A, B]> {
	const store = (broker.getLocalService(service) as unknown as { db: Record<string, Store> }).db[collection];
	const realFindOne = store.findOne.bind(store);
	const own = Object.getOwnPropertyDescriptor(store, "findOne");
	let read!: () => void;
	const hasRead = new Promise<void>(resolve => (read = resolve));
	let release!: () => void;
	const held = new Promise<void>(resolve => (release = resolve));
	// Held once; every later look-up goes straight through (plain code: the bench's build compiles this folder without jest).
	let holding = true;
	store.findOne = async (query: object) => {
		const doc = await realFindOne(query);
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
		if (own) Object.defineProperty(store, "findOne", own);
		else delete (store as Partial<Store>).findOne;
	}
}
