/**
 * Two requests changing one thing at once, as two replicas would run them: the one whose look-up
 * went stale before its write answers as if it came second (404), and changes nothing. Each test
 * holds the first request right after its look-up while the second one runs.
 */
import AccountsService from "../../services/accounts.service";
import ApiService from "../../services/api.service";
import LabelsService from "../../services/labels.service";
import { startLocal, type LocalStack } from "../support/broker";
import { addMember, createProject, createUser } from "../support/fixtures";
import { client, type Reply } from "../support/http";

let stack: LocalStack;
const as = (token: string) => client(stack.url, token);

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService]);
});

afterAll(() => stack?.stop());

interface Store {
	findOne(query: object): Promise<unknown>;
}

/** Runs `first` with the service's next `findOne` on `collection` held until `second` has answered; both answers. */
async function heldAcross(service: string, collection: string, first: () => Promise<Reply>, second: () => Promise<Reply>): Promise<[Reply, Reply]> {
	const store = (stack.broker.getLocalService(service) as unknown as { db: Record<string, Store> }).db[collection];
	const realFindOne = store.findOne.bind(store);
	let read!: () => void;
	const hasRead = new Promise<void>(resolve => (read = resolve));
	let release!: () => void;
	const held = new Promise<void>(resolve => (release = resolve));
	const spy = jest.spyOn(store, "findOne").mockImplementationOnce(async (query: object) => {
		const doc = await realFindOne(query);
		read();
		await held;
		return doc;
	});
	try {
		const firstAnswer = first();
		await hasRead;
		const secondAnswer = await second();
		release();
		return [await firstAnswer, secondAnswer];
	} finally {
		release();
		spy.mockRestore();
	}
}

it("a label change that found the label before a rename answers 404 and leaves the renamed label alone", async () => {
	const owner = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const labels = `/projects/${project.id}/labels`;
	// 200, not 201: docs/api.md#decisions.
	expect((await as(owner.token).post(labels, { body: { name: "bug", color: "#ff0000" } })).status).toBe(200);
	const [recolor, rename] = await heldAcross(
		"labels",
		"labels",
		() => as(owner.token).put(labels, { body: { name: "bug", color: "#00ff00" } }),
		() => as(owner.token).put(labels, { body: { name: "bug", new_name: "defect" } }),
	);
	expect(rename.status).toBe(200);
	expect([recolor.status, recolor.body]).toEqual([404, { message: "404 Label Not Found" }]);
	const now = (await as(owner.token).get(labels)).body as { name: string; color: string }[];
	expect(now.map(l => [l.name, l.color])).toEqual([["defect", "#FF0000"]]);
});

it("a member removed by another request meanwhile is a 404 to the second removal and to a change", async () => {
	const owner = await createUser(stack.api());
	const dev = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const member = `/projects/${project.id}/members/${dev.id}`;
	await addMember(as(owner.token), project.id, dev.id, 30);
	const [late, first] = await heldAcross(
		"accounts",
		"members",
		() => as(owner.token).del(member),
		() => as(owner.token).del(member),
	);
	expect(first.status).toBe(200);
	expect([late.status, late.body]).toEqual([404, { message: "404 Member Not Found" }]);

	await addMember(as(owner.token), project.id, dev.id, 30);
	const [change, removal] = await heldAcross(
		"accounts",
		"members",
		() => as(owner.token).put(member, { body: { access_level: 40 } }),
		() => as(owner.token).del(member),
	);
	expect(removal.status).toBe(200);
	expect([change.status, change.body]).toEqual([404, { message: "404 Member Not Found" }]);
	expect((await as(owner.token).get(member)).status).toBe(404);
});
