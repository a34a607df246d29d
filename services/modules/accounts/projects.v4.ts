/**
 * API v4's projects (docs/api.md#v4-accounts): `POST /projects` with `visibility` as a word,
 * `GET /projects` (every project the caller sees; `membership` and `owned` narrow it) and
 * `GET /projects/:id`, on the same records and rules as v3's (services/modules/accounts/projects.ts).
 */
import { config } from "../../../config";
import { AccessLevel, Visibility } from "../../../lib/accounts/access";
import { PROJECT_LIST_PARAMS, PROJECT_VISIBILITIES, visibleProjectsCondition, type ProjectListParams } from "../../../lib/accounts/listing";
import { BOOLEAN_PARAM, isTrue } from "../../../lib/api/booleans";
import { paginated, parsePage } from "../../../lib/api/pagination";
import { checkParamGroups, type ParamGroup } from "../../../lib/api/param-groups";
import { presentBasicProjectV4, presentProjectV4, presentProjectWithAccessV4 } from "../../../presenters/project.v4";
import { type AccountsModule, type Ctx, type ProjectListPresenters } from "./shared";
import { NEW_PROJECT_V4_JOINTLY } from "../../../lib/accounts/account-rules";

const LEVEL_OF: Record<(typeof PROJECT_VISIBILITIES)[number], number> = {
	private: Visibility.PRIVATE,
	internal: Visibility.INTERNAL,
	public: Visibility.PUBLIC,
};

interface NewProjectV4 {
	name?: string;
	path?: string;
	description?: string;
	visibility?: (typeof PROJECT_VISIBILITIES)[number];
	public_jobs?: unknown;
	public_builds?: unknown;
}

/** What an anonymous caller sees of the projects (GitLab's `Project.public_to_user`). */
const PUBLIC_ONLY = { visibility_level: Visibility.PUBLIC };

/** A new project needs its name, its path, or both (the other follows it). */
const NAME_GROUPS: ParamGroup[] = [{ atLeastOneOf: ["name", "path"], nullIsAbsent: true }, NEW_PROJECT_V4_JOINTLY];

/** v4's entities of a projects list. */
const LIST_PRESENTERS: ProjectListPresenters = { basic: presentBasicProjectV4, withAccess: presentProjectWithAccessV4 };

type ListParams = Omit<ProjectListParams, "archived" | "simple"> & { archived?: unknown; simple?: unknown; membership?: unknown; owned?: unknown };

export const ProjectsV4: AccountsModule = {
	actions: {
		/** `name` or `path` (the other follows it), `visibility` (default private): 201 with the project. */
		createProjectV4: {
			params: {
				name: { type: "string", optional: true, max: 255 },
				path: { type: "string", optional: true, max: 255 },
				description: { type: "string", optional: true, max: 2000 },
				visibility: { type: "enum", values: PROJECT_VISIBILITIES, optional: true },
				public_jobs: BOOLEAN_PARAM,
				// v4's older name for public_jobs.
				public_builds: BOOLEAN_PARAM,
			},
			paramGroups: NAME_GROUPS,
			async handler(ctx: Ctx<NewProjectV4>) {
				const { name, path, description, visibility, public_jobs, public_builds } = ctx.params;
				checkParamGroups(NAME_GROUPS, ctx.params);
				const { project, owner } = await this.insertProject(ctx, {
					name: name ?? path!,
					path,
					description,
					visibility_level: visibility === undefined ? undefined : LEVEL_OF[visibility],
					public_builds: isTrue(public_jobs) ?? isTrue(public_builds),
				});
				ctx.meta.$statusCode = 201;
				return presentProjectV4(project, owner, config.gitlabUrl);
			},
		},

		/** ProjectWithAccess: the project with the caller's own membership in `permissions` (anonymous: a public project, without them). */
		getProjectV4: {
			access: AccessLevel.NONE,
			auth: "optional",
			hedge: true,
			params: { id: "string" },
			async handler(ctx: Ctx) {
				const { project, owner, memberLevel } = await this.projectWithAccess(ctx);
				if (!ctx.meta.user) return presentProjectV4(project, owner, config.gitlabUrl);
				return presentProjectWithAccessV4(project, owner, config.gitlabUrl, memberLevel);
			},
		},

		/**
		 * Every project the caller sees (as v3's `GET /projects`); `membership=true` its member
		 * projects, `owned=true` its own. Without a token: the public projects (none of them anyone's
		 * membership or own), as BasicProjectDetails.
		 */
		listProjectsV4: {
			auth: "optional",
			hedge: true,
			params: { ...PROJECT_LIST_PARAMS, archived: BOOLEAN_PARAM, simple: BOOLEAN_PARAM, membership: BOOLEAN_PARAM, owned: BOOLEAN_PARAM },
			async handler(ctx: Ctx<ListParams>) {
				const caller = ctx.meta.user ?? null;
				// The lists' own booleans, as v3's listing reads them (lib/accounts/listing.ts).
				Object.assign(ctx.params, { archived: isTrue(ctx.params.archived), simple: isTrue(ctx.params.simple) });
				const listing = ctx as unknown as Ctx<ProjectListParams>;
				const owned = isTrue(ctx.params.owned);
				const membership = isTrue(ctx.params.membership);
				if (!caller) return owned || membership ? paginated([], 0, parsePage(ctx.params)) : this.projectsPage(listing, PUBLIC_ONLY, LIST_PRESENTERS);
				if (owned) return this.projectsPage(listing, { creator_id: caller.id }, LIST_PRESENTERS);
				const memberships = (await this.db.members.find({ user_id: caller.id })).map(m => m.project_id);
				const scope = membership ? { id: { $in: memberships } } : visibleProjectsCondition(memberships);
				return this.projectsPage(listing, scope, LIST_PRESENTERS);
			},
		},
	},
};
