/** API v4's tables (docs/api.md#v4), one per resource as GitLab's lib/api has them, mounted under /api/v4. */
import type { RouteTable } from "../types";
import { deployKeysRoutes } from "./deploy-keys.routes";
import { integrationsRoutes } from "./integrations.routes";
import { jobArtifactsRoutes } from "./job-artifacts.routes";
import { jobsRoutes } from "./jobs.routes";
import { labelsRoutes } from "./labels.routes";
import { membersRoutes } from "./members.routes";
import { pipelinesRoutes } from "./pipelines.routes";
import { projectSnippetsRoutes } from "./project-snippets.routes";
import { projectsRoutes } from "./projects.routes";
import { usersRoutes } from "./users.routes";

export const v4RouteTables: RouteTable[] = [
	usersRoutes,
	projectsRoutes,
	membersRoutes,
	labelsRoutes,
	projectSnippetsRoutes,
	deployKeysRoutes,
	integrationsRoutes,
	jobsRoutes,
	pipelinesRoutes,
	jobArtifactsRoutes,
];
