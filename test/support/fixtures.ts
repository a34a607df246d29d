/** Users, projects and memberships through the public API, as a client would make them. */
import type { Client } from "./http";

export interface TestUser {
	id: number;
	username: string;
	token: string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${process.pid}x${++counter}${Math.random().toString(36).slice(2, 6)}`;

/** Creates a user as admin (`root`), then signs in to get its private token. */
export async function createUser(admin: Client, opts: { admin?: boolean; username?: string } = {}): Promise<TestUser> {
	const username = opts.username ?? unique("user");
	const password = "password-" + username;
	const body = { username, name: `User ${username}`, email: `${username}@example.com`, password, admin: !!opts.admin };
	const created = await admin.post("/users", { body });
	if (created.status !== 201) throw new Error(`create user: ${created.status} ${created.text}`);
	const session = await admin.post("/session", { token: null, body: { login: username, password } });
	if (session.status !== 201) throw new Error(`session: ${session.status} ${session.text}`);
	return { id: created.body.id, username, token: session.body.private_token };
}

export async function createProject(owner: Client, opts: { name?: string; visibility_level?: number; public_builds?: boolean } = {}) {
	const res = await owner.post("/projects", {
		body: { name: opts.name ?? unique("project"), visibility_level: opts.visibility_level ?? 0, public_builds: opts.public_builds },
	});
	if (res.status !== 201) throw new Error(`create project: ${res.status} ${res.text}`);
	return res.body as { id: number; path_with_namespace: string };
}

export async function addMember(owner: Client, projectId: number, userId: number, level: number) {
	const res = await owner.post(`/projects/${projectId}/members`, { body: { user_id: userId, access_level: level } });
	if (res.status !== 201) throw new Error(`add member: ${res.status} ${res.text}`);
}

/** Guest, reporter, developer and master members plus a stranger, on one new project. */
export async function roleMatrix(root: Client, client: (token: string) => Client, visibility = 0) {
	const owner = await createUser(root);
	const project = await createProject(client(owner.token), { visibility_level: visibility });
	const roles: Record<string, TestUser> = { owner };
	for (const [role, level] of [
		["guest", 10],
		["reporter", 20],
		["developer", 30],
		["master", 40],
	] as const) {
		roles[role] = await createUser(root);
		await addMember(client(owner.token), project.id, roles[role].id, level);
	}
	roles.stranger = await createUser(root);
	return { project, roles };
}
