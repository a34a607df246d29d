/**
 * GitLab 8.x project access rules, pure. The gateway resolves the caller's level once per
 * request; services compare it with what an action needs.
 */
export const AccessLevel = { NONE: 0, GUEST: 10, REPORTER: 20, DEVELOPER: 30, MASTER: 40, OWNER: 50 } as const;
export const MEMBER_LEVELS = [10, 20, 30, 40, 50] as const;

export const Visibility = { PRIVATE: 0, INTERNAL: 10, PUBLIC: 20 } as const;
export const VISIBILITY_LEVELS = [0, 10, 20] as const;

export interface Caller {
	id: number;
	username: string;
	is_admin: boolean;
}

export interface ProjectRef {
	id: number;
	path_with_namespace: string;
	visibility_level: number;
	public_builds: boolean;
	creator_id: number;
}

/** What the gateway puts in `ctx.meta.access` for a `/projects/:id/…` request. */
export interface ProjectAccess {
	project: ProjectRef;
	/** The caller's membership level (0 for none). Admins count as owners. */
	level: number;
	/** True for site admins. */
	admin: boolean;
}

/** read_project: members, admins, any logged-in user on public/internal projects, anyone on public ones. */
export function canReadProject(project: Pick<ProjectRef, "visibility_level">, user: Caller | null, memberLevel: number): boolean {
	if (user?.is_admin) return true;
	if (memberLevel > 0) return true;
	if (project.visibility_level === Visibility.PUBLIC) return true;
	return project.visibility_level === Visibility.INTERNAL && !!user;
}

/** The effective level an action compares against: admins act as owners. */
export function effectiveLevel(user: Caller | null, memberLevel: number): number {
	return user?.is_admin ? AccessLevel.OWNER : memberLevel;
}

export function hasLevel(access: ProjectAccess, needed: number): boolean {
	return access.admin || access.level >= needed;
}

/**
 * read_build: reporters and up; with public builds, anyone who reads a public project, and any
 * signed-in user who reads an internal one.
 */
export function canReadBuilds(access: ProjectAccess, loggedIn: boolean): boolean {
	if (hasLevel(access, AccessLevel.REPORTER)) return true;
	if (!access.project.public_builds) return false;
	return access.project.visibility_level === Visibility.PUBLIC || (loggedIn && access.project.visibility_level === Visibility.INTERNAL);
}
