/**
 * The gateway's OpenAPI document is built once for the services as they are and built again when
 * they change: the parameters of a service started after the first request are in the next one,
 * and go when it stops.
 */
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";

let stack: LocalStack;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService]);
});

afterAll(() => stack?.stop());

type Operation = { description: string; requestBody: { required: boolean } };

const createLabel = async (): Promise<Operation> => {
	const res = await fetch(`${stack.url}/openapi.json`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { paths: Record<string, { post: Operation }> }).paths["/projects/{id}/labels"].post;
};

it("follows the services: a service started later is described in the next request, and not after it stopped", async () => {
	const unknown = await createLabel();
	expect(unknown.description).toMatch(/^No node of the cluster offered this action/);
	expect(await createLabel()).toEqual(unknown);

	const labels = stack.broker.createService(LabelsService);
	await stack.broker.waitForServices("labels");
	const known = await createLabel();
	expect([known.description, known.requestBody.required]).toEqual(["Needs reporter access to the project or more.", true]);

	await stack.broker.destroyService(labels);
	expect(await createLabel()).toEqual(unknown);
});
