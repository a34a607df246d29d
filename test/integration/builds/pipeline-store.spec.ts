/**
 * A batch of builds and the pipelines it makes (lib/builds/pipeline-store.ts): a pipeline made by
 * the batch takes its first status from the batch's builds, and one that existed already is worked
 * out again from all of its builds.
 */
import { SHA_A, SHA_B } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser } from "../../support/fixtures";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";

let stack: LocalStack;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
});

afterAll(() => stack?.stop());

const commit = (id: string) => ({ id, message: "m", author_name: "Ada", author_email: "ada@example.com", created_at: "2016-01-11T10:13:33+01:00" });

it("gives a pipeline made by a batch the status of its builds, and works an existing one out again", async () => {
	const owner = await createUser(stack.api());
	const projectId = (await createProject(stack.api(owner.token))).id;
	const batch = (builds: { sha: string; status: string }[]) =>
		stack.broker.call("builds.createBatch", {
			project_id: projectId,
			builds: builds.map(b => ({ name: "rspec", ref: "master", commit: commit(b.sha), status: b.status })),
		});
	await batch([
		{ sha: SHA_A, status: "success" },
		{ sha: SHA_A, status: "failed" },
		{ sha: SHA_B, status: "success" },
	]);
	const statuses = async () =>
		Object.fromEntries(
			((await stack.v4(owner.token).get(`/projects/${projectId}/pipelines`)).body as { sha: string; status: string }[]).map(p => [p.sha, p.status]),
		);
	expect(await statuses()).toEqual({ [SHA_A]: "failed", [SHA_B]: "success" });

	// SHA_B's pipeline exists: its status counts the build already there as well as the new one.
	await batch([{ sha: SHA_B, status: "running" }]);
	expect(await statuses()).toEqual({ [SHA_A]: "failed", [SHA_B]: "running" });
});
