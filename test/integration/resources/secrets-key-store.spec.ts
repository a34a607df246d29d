/**
 * The secrets key is checked against each encrypting service's own store, on every back end
 * (SQLite, and MongoDB through the wire-protocol server of test/support/mongo-server.ts): where
 * the data lives in MongoDB, a pod's
 * DATA_DIR remembers nothing, so only the store can refuse a key its data was not written with.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { config } from "../../../config";
import { deriveKey, encryptSecret } from "../../../lib/crypto/secrets";
import { StoredSecretsKeyMismatchError, verifySecretsKeyInStore } from "../../../lib/crypto/secrets-key";
import { Collection, type StoreLocation } from "../../../lib/store/collection";
import { secretsKeyCheckCollection } from "../../../models/secrets-key-check";
import AccountsService from "../../../services/accounts.service";
import IntegrationsService from "../../../services/integrations.service";
import { startMongoServer, type MongoServer } from "../../support/mongo-server";

let mongo: MongoServer;
beforeAll(async () => {
	mongo = await startMongoServer();
});
const backends: [string, () => StoreLocation][] = [
	["SQLite", () => ({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "glv3-keystore-")), mongoUri: "" })],
	["MongoDB", () => ({ dataDir: "", mongoUri: mongo.database(`keycheck_${process.pid}`) })],
];

const broker = new ServiceBroker({ logger: false });
afterAll(async () => {
	await broker.stop();
	await mongo?.stop();
});
const keyA = deriveKey("the-first-key-0123456789");
const keyB = deriveKey("another-key-0123456789");

describe.each(backends)("the stored secrets-key check on %s", (_name, location) => {
	let seq = 0;
	const opened: Collection[] = [];
	const open = async () => {
		const c = new Collection(`keycheck_${process.pid}_${++seq}`, secretsKeyCheckCollection, location());
		await c.connect(broker);
		opened.push(c);
		return c;
	};
	afterAll(async () => {
		for (const c of opened) await c.disconnect();
	});

	it("is written on the first start, passes with the same key, and refuses another, naming the service and where", async () => {
		const store = await open();
		await verifySecretsKeyInStore(store, keyA, "accounts", "DATA_DIR=/x");
		await verifySecretsKeyInStore(store, keyA, "accounts", "DATA_DIR=/x");
		expect(await store.count({})).toBe(1);
		const doc = await store.findOne({ name: "secrets-key" });
		expect(String(doc?.value)).toMatch(/^v1:/);
		const refused = verifySecretsKeyInStore(store, keyB, "accounts", "MongoDB (MONGO_URI)");
		await expect(refused).rejects.toBeInstanceOf(StoredSecretsKeyMismatchError);
		await expect(refused).rejects.toThrow("The secrets key does not match the data of accounts in MongoDB (MONGO_URI)");
	});

	it("writes one check value when first starts race, and refuses the key that lost", async () => {
		const same = await open();
		await Promise.all([1, 2, 3].map(() => verifySecretsKeyInStore(same, keyA, "integrations", "here")));
		expect(await same.count({})).toBe(1);

		const different = await open();
		const outcomes = await Promise.allSettled([keyA, keyB].map(key => verifySecretsKeyInStore(different, key, "integrations", "here")));
		expect(outcomes.map(o => o.status).sort()).toEqual(["fulfilled", "rejected"]);
		expect(await different.count({})).toBe(1);
	});
});

describe("accounts and integrations", () => {
	it("check the key against their own stores when they start, and refuse to start on data written with another", async () => {
		const first = new ServiceBroker({ logger: false });
		first.createService(AccountsService);
		first.createService(IntegrationsService);
		await first.start();
		await first.stop();

		// The data was written with another key: what a different SECRETS_KEY would meet.
		const where = { dataDir: config.dataDir, mongoUri: config.mongoUri };
		for (const service of ["accounts", "integrations"]) {
			const store = new Collection(`${service}_secrets_key`, secretsKeyCheckCollection, where);
			await store.connect(broker);
			expect(await store.count({})).toBe(1);
			expect(await store.update({ name: "secrets-key" }, { value: encryptSecret("written with another key", keyB) })).toBe(1);
			await store.disconnect();

			const again = new ServiceBroker({ logger: false });
			const refused = again.createService(service === "accounts" ? AccountsService : IntegrationsService);
			await expect(again.start()).rejects.toThrow(`The secrets key does not match the data of ${service}`);
			// A node that failed to start exits (moleculer-runner); here its service is stopped by hand, closing its store.
			await again.destroyService(refused);
			await again.stop();
		}
	});
});
