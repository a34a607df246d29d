/**
 * `DbMixin({ labels: labelsCollection })` gives a service `this.db.labels` (lib/store/collection.ts),
 * connected while the service runs, where config/ says the data lives.
 */
import type { ServiceSchema } from "moleculer";
import { config } from "../config";
import { Collection, type CollectionOptions, type StoreLocation } from "../lib/store/collection";

/** The collections `created` made (Moleculer types a service's own properties as `any`). */
const collectionsOf = (service: object): Collection[] => Object.values((service as { db: Record<string, Collection> }).db);

/** `this.db.<name>` for each collection, connected in `started` and closed in `stopped`. */
export function DbMixin(collections: Record<string, CollectionOptions>, location?: Partial<StoreLocation>): Partial<ServiceSchema> {
	const where: StoreLocation = { dataDir: location?.dataDir ?? config.dataDir, mongoUri: location?.mongoUri ?? config.mongoUri };
	return {
		created() {
			this.db = Object.fromEntries(Object.entries(collections).map(([name, opts]) => [name, new Collection(name, opts, where)]));
		},
		async started() {
			for (const collection of collectionsOf(this)) await collection.connect(this.broker);
		},
		async stopped() {
			for (const collection of collectionsOf(this)) await collection.disconnect();
		},
	};
}
