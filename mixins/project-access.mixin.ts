/**
 * Project access for resource services. The gateway has already resolved the project and the
 * caller's level (an unreadable project never gets here: it is a 404 at the gateway) and checked
 * the level the action declares (`access`, types/moleculer.d.ts); `this.access(ctx)` gives both to
 * the handler, for the rules that depend on the record.
 */
import type { Context, ServiceSchema } from "moleculer";
import type { ProjectAccess } from "../lib/accounts/access";
import type { ApiMeta } from "../lib/api/context";
import { notFound } from "../lib/api/errors";

export interface ProjectAccessMethods {
	access(ctx: Context<unknown, ApiMeta>): ProjectAccess;
}

export function ProjectAccessMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			access(ctx: Context<unknown, ApiMeta>): ProjectAccess {
				const access = ctx.meta.access;
				if (!access) throw notFound("Project");
				return access;
			},
		},
	};
}
