/**
 * Two requests changing one thing at once, as two replicas would run them (test/support/races.ts):
 * the one whose look-up went stale before its write answers as if it came second (404), and
 * changes nothing.
 */
import AccountsService from "../../services/accounts.service";
import ApiService from "../../services/api.service";
import LabelsService from "../../services/labels.service";
import { startLocal, type LocalStack } from "../support/broker";
import { addMember, createProject, createUser } from "../support/fixtures";
import { client } from "../support/http";
import { heldAcross } from "../support/races";

let stack: LocalStack;
const as = (token: string) => client(stack.url, token);

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService]);
});

afterAll(() => stack?.stop());

it("a label change that found the label before a rename answers 404 and leaves the renamed label alone", async () => {
	const owner = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const labels = `/projects/${project.id}/labels`;
	// 200, not 201: docs/api.md#decisions.
	expect((await as(owner.token).post(labels, { body: { name: "bug", color: "#ff0000" } })).status).toBe(200);
	const [recolor, rename] = await heldAcross(
		stack.broker,
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
		stack.broker,
		"accounts",
		"members",
		() => as(owner.token).del(member),
		() => as(owner.token).del(member),
	);
	expect(first.status).toBe(200);
	expect([late.status, late.body]).toEqual([404, { message: "404 Member Not Found" }]);

	await addMember(as(owner.token), project.id, dev.id, 30);
	const [change, removal] = await heldAcross(
		stack.broker,
		"accounts",
		"members",
		() => as(owner.token).put(member, { body: { access_level: 40 } }),
		() => as(owner.token).del(member),
	);
	expect(removal.status).toBe(200);
	expect([change.status, change.body]).toEqual([404, { message: "404 Member Not Found" }]);
	expect((await as(owner.token).get(member)).status).toBe(404);
});
