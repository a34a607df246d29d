/** Projects: `POST /projects` (the creator becomes owner) and `GET /projects/:id`. */
import { config } from "../../../config";
import { AccessLevel } from "../../../lib/accounts/access";
import { validateNewProject } from "../../../lib/accounts/account-rules";
import { notFound, unauthorized, validation } from "../../../lib/api/errors";
import { UniqueViolation } from "../../../lib/store/collection";
import type { ProjectDoc } from "../../../models/project";
import { publicUser } from "../../../models/user";
import { presentProject } from "../../../presenters/project";
import { callerOf, now, type AccountsModule, type Ctx } from "./module";

interface NewProject {
	name: string;
	path?: string;
	description?: string;
	visibility_level?: number;
	public_builds?: boolean;
}

export const Projects: AccountsModule = {
	actions: {
		createProject: {
			params: {
				name: { type: "string", max: 255 },
				path: { type: "string", optional: true, max: 255 },
				description: { type: "string", optional: true, max: 2000 },
				visibility_level: { type: "number", integer: true, optional: true, convert: true },
				public_builds: { type: "boolean", optional: true, convert: true },
			},
			async handler(ctx: Ctx<NewProject>) {
				const owner = await this.db.users.findOne({ id: callerOf(ctx).id });
				if (!owner) throw unauthorized();
				const { errors, project } = validateNewProject(ctx.params, owner.username);
				if (errors || !project) throw validation(errors ?? {});
				const fields: Omit<ProjectDoc, "id"> = {
					...project,
					path_key: project.path_with_namespace.toLowerCase(),
					name_key: `${owner.username}/${project.name}`.toLowerCase(),
					creator_id: owner.id,
					created_at: now(),
				};
				let stored: ProjectDoc;
				try {
					stored = await this.db.projects.insert(fields);
				} catch (err) {
					if (err instanceof UniqueViolation) throw validation({ name: ["has already been taken"], path: ["has already been taken"] });
					throw err;
				}
				await this.db.members.insert(this.memberDoc(stored.id, owner.id, AccessLevel.OWNER));
				ctx.meta.$statusCode = 201;
				return presentProject(stored, publicUser(owner), config.gitlabUrl);
			},
		},

		getProject: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string" },
			async handler(ctx: Ctx) {
				const project = await this.db.projects.findOne({ id: this.access(ctx).project.id });
				if (!project) throw notFound("Project");
				const owner = await this.db.users.findOne({ id: project.creator_id });
				return presentProject(project, owner ? publicUser(owner) : null, config.gitlabUrl);
			},
		},
	},
};
