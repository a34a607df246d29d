/**
 * Each operation's one-line summary in the API reference (gateway/openapi.ts): by the action a
 * route calls (v4's `…V4` actions share their v3 twin's line), or by method and path for a route
 * the gateway serves itself. test/unit/openapi-summaries.spec.ts checks every routed one has a line.
 */
const BY_ACTION: Record<string, string> = {
	"accounts.addMember": "Add a member to a project",
	"accounts.createProject": "Create a project",
	"accounts.createUser": "Create a user (admins)",
	"accounts.getMember": "Get a project member",
	"accounts.getProject": "Get a project",
	"accounts.getUser": "Get a user",
	"accounts.listAllProjects": "List every project (admins)",
	"accounts.listMembers": "List a project's members",
	"accounts.listOwnedProjects": "List the projects you own",
	"accounts.listProjects": "List the projects you can see",
	"accounts.listUsers": "List or look up users",
	"accounts.login": "Sign in: get your private token",
	"accounts.me": "Get the signed-in user",
	"accounts.removeMember": "Remove a project member",
	"accounts.updateMember": "Change a member's access level",
	"builds.appendTrace": "Append to a build's trace (CI side)",
	"builds.authorizeArtifactsUpload": "Upload a build's artifacts (CI side)",
	"builds.cancel": "Cancel a build",
	"builds.cancelJob": "Cancel a job",
	"builds.commitBuilds": "List a commit's builds",
	"builds.create": "Create a build (CI side)",
	"builds.deleteArtifacts": "Delete a job's artifacts",
	"builds.erase": "Erase a build: its trace and artifacts",
	"builds.eraseJob": "Erase a job: its log and artifacts",
	"builds.get": "Get a build",
	"builds.getJob": "Get a job",
	"builds.getPipeline": "Get a pipeline",
	"builds.keepArtifacts": "Keep a job's artifacts past their expiry",
	"builds.list": "List a project's builds",
	"builds.listJobs": "List a project's jobs",
	"builds.latestPipeline": "Get a ref's latest pipeline",
	"builds.listPipelineJobs": "List a pipeline's jobs",
	"builds.listPipelines": "List a project's pipelines",
	"builds.retry": "Retry a build",
	"builds.retryJob": "Retry a job",
	"builds.updateState": "Update a build's state (CI side)",
	"events.deadLetters": "List the pushes whose delivery failed",
	"events.push": "Report a push (git side)",
	"events.replay": "Deliver a failed push again",
	"integrations.list": "List a project's integrations",
	"integrations.remove": "Turn an integration off and clear its settings",
	"integrations.show": "Get an integration's settings",
	"integrations.update": "Set up an integration",
	"keys.create": "Add a deploy key to a project",
	"keys.disable": "Disable a deploy key for a project",
	"keys.enable": "Enable an existing deploy key for a project",
	"keys.get": "Get a project's deploy key",
	"keys.list": "List a project's deploy keys",
	"keys.listAll": "List every deploy key (admins)",
	"keys.remove": "Remove a deploy key from a project",
	"keys.update": "Edit a project's deploy key",
	"labels.create": "Create a label",
	"labels.get": "Get a label",
	"labels.list": "List a project's labels",
	"labels.remove": "Delete a label",
	"labels.subscribe": "Subscribe to a label",
	"labels.unsubscribe": "Unsubscribe from a label",
	"labels.update": "Edit a label",
	"snippets.create": "Create a snippet",
	"snippets.fileRaw": "Get a snippet file's raw content",
	"snippets.get": "Get a snippet",
	"snippets.list": "List a project's snippets",
	"snippets.raw": "Get a snippet's raw content",
	"snippets.remove": "Delete a snippet",
	"snippets.update": "Edit a snippet",
};

/** Routes the gateway serves itself (file downloads), by method and path as their table has them. */
const BY_ROUTE: Record<string, string> = {
	"GET /projects/:id/builds/:build_id/artifacts": "Download a build's artifacts archive",
	"GET /projects/:id/builds/:build_id/trace": "Get a build's trace",
	"GET /projects/:id/jobs/:job_id/artifacts": "Download a job's artifacts archive",
	"GET /projects/:id/jobs/:job_id/artifacts/*artifact_path": "Download one file of a job's artifacts",
	"GET /projects/:id/jobs/:job_id/trace": "Get a job's log",
	"GET /projects/:id/jobs/artifacts/*ref_name/download": "Download the artifacts of a ref's latest successful job",
	"GET /projects/:id/jobs/artifacts/*ref_name/raw/*artifact_path": "Download one file of the artifacts of a ref's latest successful job",
};

/** The summary of the route `METHOD aliasPath` calling `action` (null: the gateway serves it), if one is written. */
export function operationSummary(method: string, aliasPath: string, action: string | null): string | undefined {
	if (action) return BY_ACTION[action] ?? BY_ACTION[action.replace(/V4$/, "")];
	return BY_ROUTE[`${method} ${aliasPath}`];
}
