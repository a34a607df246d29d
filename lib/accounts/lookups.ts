/**
 * The accounts actions other services call (services/modules/accounts/lookups.ts answers them):
 * their names and the shapes of their answers, declared once here.
 */
import type { ProjectDoc } from "../../models/project";
import type { UserDoc } from "../../models/user";

/** A broker or a context: whatever can call an action. */
interface Caller {
	call<T, P>(action: string, params: P): Promise<T>;
}

const USERS_BY_IDS = "accounts.usersByIds";
const PROJECT_BY_ID = "accounts.projectById";

/** The users of some ids (without credentials), by id: one call, none for no ids. */
export async function usersById(caller: Caller, ids: Iterable<number>): Promise<Map<number, UserDoc>> {
	const unique = [...new Set(ids)];
	const users = unique.length ? await caller.call<UserDoc[], { ids: number[] }>(USERS_BY_IDS, { ids: unique }) : [];
	return new Map(users.map(u => [u.id, u]));
}

/** A project by id, or null. */
export function projectById(caller: Caller, id: number): Promise<ProjectDoc | null> {
	return caller.call<ProjectDoc | null, { id: number }>(PROJECT_BY_ID, { id });
}
