/**
 * Project access for resource services. The gateway has already resolved the project and the
 * caller's level (an unreadable project never gets here: it is a 404 at the gateway), so a
 * service only states the level an action needs.
 */
import type { Context, ServiceSchema } from "moleculer";
import { hasLevel, type ProjectAccess } from "../lib/access";
import type { ApiMeta } from "../lib/context";
import { forbidden, notFound } from "../lib/errors";

export interface ProjectAccessMethods {
	access(ctx: Context<unknown, ApiMeta>): ProjectAccess;
	requireLevel(ctx: Context<unknown, ApiMeta>, level: number): ProjectAccess;
}

export function ProjectAccessMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			access(ctx: Context<unknown, ApiMeta>): ProjectAccess {
				const access = ctx.meta.access;
				if (!access) throw notFound("Project");
				return access;
			},
			requireLevel(ctx: Context<unknown, ApiMeta>, level: number): ProjectAccess {
				const access = this.access(ctx);
				if (!hasLevel(access, level)) throw forbidden();
				return access;
			},
		},
	};
}
