/**
 * Projects: `POST /projects` (the creator becomes owner), `GET /projects/:id`, and GitLab 8.16's
 * lists: `GET /projects` (member projects and the public and internal ones), `/projects/owned`,
 * `/projects/all` (admins), filtered, ordered and paged in the store (lib/accounts/listing.ts).
 */
import { config } from "../../../config";
import { AccessLevel, Visibility } from "../../../lib/accounts/access";
import { NEW_PROJECT_DOC, validateNewProject } from "../../../lib/accounts/account-rules";
import { allOf, PROJECT_LIST_PARAMS, projectFilters, projectSort, visibleProjectsCondition, type ProjectListParams } from "../../../lib/accounts/listing";
import { forbidden, notFound, unauthorized, validation } from "../../../lib/api/errors";
import { pageWindow, paginated, parsePage } from "../../../lib/api/pagination";
import { UniqueViolation } from "../../../lib/store/collection";
import { memberKey, type ProjectDoc } from "../../../models/project";
import { publicUser, type UserDoc } from "../../../models/user";
import { presentBasicProject, presentProject, presentProjectWithAccess } from "../../../presenters/project";
import { callerOf, now, type AccountsModule, type Ctx, type NewProject, type ProjectListPresenters } from "./shared";

/** v3's entities of a projects list. */
const LIST_PRESENTERS: ProjectListPresenters = { basic: presentBasicProject, withAccess: presentProjectWithAccess };

export const Projects: AccountsModule = {
	actions: {
		createProject: {
			params: {
				name: { type: "string", max: 255 },
				path: { type: "string", optional: true, max: 255 },
				description: { type: "string", optional: true, max: 2000 },
				visibility_level: { type: "number", integer: true, optional: true, convert: true, openapi: NEW_PROJECT_DOC.visibility_level },
				// GitLab 8.16's older spelling: true is public, false private, unless visibility_level is given.
				public: { type: "boolean", optional: true, convert: true },
				public_builds: { type: "boolean", optional: true, convert: true },
			},
			paramGroups: [NEW_PROJECT_DOC.jointly],
			async handler(ctx: Ctx<NewProject & { public?: boolean }>) {
				const { public: isPublic, ...asked } = ctx.params;
				if (asked.visibility_level === undefined && isPublic !== undefined) asked.visibility_level = isPublic ? Visibility.PUBLIC : Visibility.PRIVATE;
				const { project, owner } = await this.insertProject(ctx, asked);
				ctx.meta.$statusCode = 201;
				return presentProject(project, owner, config.gitlabUrl);
			},
		},

		/** ProjectWithAccess: the project with the caller's own membership in `permissions`. */
		getProject: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string" },
			async handler(ctx: Ctx) {
				const { project, owner, memberLevel } = await this.projectWithAccess(ctx);
				return presentProjectWithAccess(project, owner, config.gitlabUrl, memberLevel);
			},
		},

		/** `GET /projects`: the projects the caller is a member of, and the public and internal ones. */
		listProjects: {
			hedge: true,
			params: PROJECT_LIST_PARAMS,
			async handler(ctx: Ctx<ProjectListParams>) {
				const memberships = await this.db.members.find({ user_id: callerOf(ctx).id });
				return this.projectsPage(ctx, visibleProjectsCondition(memberships.map(m => m.project_id)), LIST_PRESENTERS);
			},
		},

		/** `GET /projects/owned`: the projects in the caller's namespace. */
		listOwnedProjects: {
			hedge: true,
			params: PROJECT_LIST_PARAMS,
			async handler(ctx: Ctx<ProjectListParams>) {
				return this.projectsPage(ctx, { creator_id: callerOf(ctx).id }, LIST_PRESENTERS);
			},
		},

		/** `GET /projects/all`: every project, for admins (403 for anyone else). */
		listAllProjects: {
			hedge: true,
			params: PROJECT_LIST_PARAMS,
			async handler(ctx: Ctx<ProjectListParams>) {
				if (!callerOf(ctx).is_admin) throw forbidden();
				return this.projectsPage(ctx, {}, LIST_PRESENTERS);
			},
		},
	},

	methods: {
		/**
		 * A new project of the caller's (its owner), checked as GitLab checks it (both versions: v4
		 * names the visibility as a word and reads it into `visibility_level` first).
		 */
		async insertProject(ctx: Ctx<unknown>, asked: NewProject): Promise<{ project: ProjectDoc; owner: UserDoc }> {
			const stored = await this.db.users.findOne({ id: callerOf(ctx).id });
			if (!stored) throw unauthorized();
			const owner = publicUser(stored);
			const { errors, project } = validateNewProject(asked, owner.username);
			if (errors || !project) throw validation(errors ?? {});
			const fields: Omit<ProjectDoc, "id"> = {
				...project,
				path_key: project.path_with_namespace.toLowerCase(),
				name_key: `${owner.username}/${project.name}`.toLowerCase(),
				creator_id: owner.id,
				created_at: now(),
			};
			const taken = () => validation({ name: ["has already been taken"], path: ["has already been taken"] });
			// The unique indexes decide; this read only spares a taken name the writes below.
			const [samePath, sameName] = await Promise.all([
				this.db.projects.findOne({ path_key: fields.path_key }),
				this.db.projects.findOne({ name_key: fields.name_key }),
			]);
			if (samePath || sameName) throw taken();
			// Access is membership: the owner's is written first, under the id the project will have, so
			// that no failure between the two writes leaves a project nobody can reach with its path
			// taken. A membership whose project was never made gives nobody anything.
			const id = await this.db.projects.nextId();
			const membership = this.memberDoc(id, owner.id, AccessLevel.OWNER);
			await this.db.members.insert(membership);
			try {
				return { project: await this.db.projects.insert({ ...fields, id }), owner };
			} catch (err) {
				await this.db.members.remove({ member_key: membership.member_key }).catch((e: Error) => {
					this.logger.warn(`The owner's membership of project ${id}, which could not be made, is left: ${e.message}`);
				});
				if (err instanceof UniqueViolation) throw taken();
				throw err;
			}
		},

		/** `GET /projects/:id` in both versions: the project, its owner and the caller's own membership level (null: none). */
		async projectWithAccess(ctx: Ctx) {
			const project = await this.db.projects.findOne({ id: this.access(ctx).project.id });
			if (!project) throw notFound("Project");
			const caller = ctx.meta.user;
			const [owner, member] = await Promise.all([
				this.db.users.findOne({ id: project.creator_id }),
				caller ? this.db.members.findOne({ member_key: memberKey(project.id, caller.id) }) : null,
			]);
			return { project, owner: owner ? publicUser(owner) : null, memberLevel: member?.access_level ?? null };
		},

		/**
		 * One page of the projects in `scope` after GitLab's filters, in its order: filtered, sorted
		 * and windowed by the store, then the page's owners and the caller's memberships in one
		 * look-up each (a page is at most 100 projects), in the version's entities.
		 */
		async projectsPage(ctx: Ctx<ProjectListParams>, scope: Record<string, unknown>, present: ProjectListPresenters) {
			const params = ctx.params;
			const query = allOf([scope, ...projectFilters(params)].filter(q => Object.keys(q).length > 0));
			const page = parsePage(params);
			const [rows, total] = await this.db.projects.findPage(query, pageWindow(page), { sort: projectSort(params) });
			const creatorIds = [...new Set(rows.map(p => p.creator_id))];
			const owners = new Map<number, UserDoc>(
				creatorIds.length ? (await this.db.users.find({ id: { $in: creatorIds } })).map(u => [u.id, publicUser(u)] as const) : [],
			);
			const ownerOf = (p: ProjectDoc) => owners.get(p.creator_id) ?? null;
			// An anonymous caller has no permissions to show: GitLab lists BasicProjectDetails to it.
			if (params.simple || !ctx.meta.user)
				return paginated(
					rows.map(p => present.basic(p, ownerOf(p), config.gitlabUrl)),
					total,
					page,
				);
			const callerId = callerOf(ctx).id;
			const keys = rows.map(p => memberKey(p.id, callerId));
			const memberships = keys.length ? await this.db.members.find({ member_key: { $in: keys } }) : [];
			const levels = new Map(memberships.map(m => [m.project_id, m.access_level] as const));
			return paginated(
				rows.map(p => present.withAccess(p, ownerOf(p), config.gitlabUrl, levels.get(p.id) ?? null)),
				total,
				page,
			);
		},
	},
};
