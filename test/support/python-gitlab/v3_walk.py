"""python-gitlab 1.4.0, the last release that speaks API v3, through the calls a script written
for GitLab 8.16 makes on our slice; run by test/e2e/python-gitlab-v3.spec.ts (docs/clients.md)."""
import hashlib

import gitlab
from gitlab.v3.objects import ProjectCommit

from walk import Walk, eq, fails_with, has

walk = Walk()
i = walk.input
gl = gitlab.Gitlab(i["url"], private_token=i["owner"]["token"], api_version="3")
root = gitlab.Gitlab(i["url"], private_token=i["root_token"], api_version="3")
owner, member, builds = i["owner"], i["member"], i["builds"]
state = {}


@walk.check("users", "auth() reads the current user")
def _():
    gl.auth()
    has(gl.user.as_dict(), {"id": owner["id"], "username": owner["username"], "state": "active", "is_admin": False})


@walk.check("users", "users.list(username=) finds one user")
def _():
    eq([u.id for u in gl.users.list(username=member["username"])], [member["id"]])


@walk.check("users", "users.search() finds one user")
def _():
    eq([(u.id, u.username) for u in gl.users.search(member["username"])], [(member["id"], member["username"])])


@walk.check("users", "users.get() reads a user")
def _():
    has(gl.users.get(member["id"]).as_dict(), {"id": member["id"], "username": member["username"], "name": "User " + member["username"]})


@walk.check("projects", "projects.create() makes an internal project")
def _():
    p = gl.projects.create({"name": i["new_project_name"], "visibility_level": 10, "description": "from python-gitlab 1.4"})
    has(p.as_dict(), {"name": i["new_project_name"], "visibility_level": 10, "public": False, "description": "from python-gitlab 1.4"})
    eq(p.namespace.path, owner["username"])
    state["new_project"] = p.id


@walk.check("projects", "projects.get() reads it")
def _():
    p = gl.projects.get(state["new_project"])
    has(p.as_dict(), {"id": state["new_project"], "name": i["new_project_name"], "path_with_namespace": owner["username"] + "/" + p.path})


@walk.check("projects", "projects.list(search=) finds it")
def _():
    eq([p.id for p in gl.projects.list(search=i["new_project_name"])], [state["new_project"]])


project = gl.projects.get(i["project"]["id"])


@walk.check("members", "members.create() adds a developer")
def _():
    m = project.members.create({"user_id": member["id"], "access_level": 30})
    has(m.as_dict(), {"id": member["id"], "username": member["username"], "access_level": 30, "expires_at": None})


@walk.check("members", "members.list() lists the owner and the developer")
def _():
    eq(sorted((m.id, m.access_level) for m in project.members.list()), sorted([(owner["id"], 50), (member["id"], 30)]))


@walk.check("members", "members.get() reads one")
def _():
    has(project.members.get(member["id"]).as_dict(), {"id": member["id"], "access_level": 30})


@walk.check("builds", "builds.list() lists the project's builds, newest first")
def _():
    eq([b.id for b in project.builds.list()], [builds["lint"], builds["rspec"], builds["rubocop"], builds["build"]])


@walk.check("builds", "builds.list(scope=[running, pending]) filters by state")
def _():
    eq([(b.id, b.status) for b in project.builds.list(scope=["running", "pending"])], [(builds["lint"], "pending"), (builds["rspec"], "running")])


@walk.check("builds", "builds.get() reads a build with its commit, user and artifacts file")
def _():
    b = project.builds.get(builds["rubocop"])
    has(b.as_dict(), {"id": builds["rubocop"], "name": "rubocop", "status": "failed", "ref": "master", "stage": "test"})
    eq(b.commit.id, i["sha_a"])
    eq(b.user.username, owner["username"])
    eq(b.artifacts_file, {"filename": "rubocop-artifacts.zip", "size": i["artifacts"]["rubocop"]["size"]})


@walk.check("builds", "build.trace() reads the trace")
def _():
    eq(project.builds.get(builds["rubocop"]).trace(), i["trace"].encode())


@walk.check("builds", "build.artifacts() downloads the archive")
def _():
    eq(hashlib.sha256(project.builds.get(builds["rubocop"]).artifacts()).hexdigest(), i["artifacts"]["rubocop"]["sha256"])


@walk.check("builds", "ProjectCommit.builds() lists a commit's builds")
def _():
    commit = ProjectCommit(gl, {"id": i["sha_b"], "project_id": project.id})
    eq([b.id for b in commit.builds()], [builds["lint"], builds["rspec"]])


@walk.check("builds", "build.cancel() cancels a running build (201)")
def _():
    project.builds.get(builds["rspec"]).cancel()
    eq(project.builds.get(builds["rspec"]).status, "canceled")


@walk.check("builds", "build.retry() makes a new pending build (201)")
def _():
    project.builds.get(builds["rspec"]).retry()
    newest = project.builds.list()[0]
    eq((newest.status, newest.name, newest.ref, newest.id > builds["lint"]), ("pending", "rspec", "feature", True))


@walk.check("builds", "build.erase() removes the trace and the artifacts (201)")
def _():
    project.builds.get(builds["rubocop"]).erase()
    b = project.builds.get(builds["rubocop"])
    eq(b.artifacts_file, None)
    fails_with(lambda: b.artifacts(), 404)


@walk.check("builds", "build.keep_artifacts() is not in v3's slice: 404")
def _():
    fails_with(lambda: project.builds.get(builds["lint"]).keep_artifacts(), 404)


@walk.check("labels", "labels.create() makes the label, and raises: v3 answers 200, the client wants 201")
def _():
    fails_with(lambda: project.labels.create({"name": "needs review", "color": "#FF0000", "description": "to read"}), 200)


@walk.check("labels", "labels.list() lists it with its counts")
def _():
    eq([(l.name, l.color, l.open_issues_count) for l in project.labels.list()], [("needs review", "#FF0000", 0)])


@walk.check("labels", "label.save() renames and recolours it (PUT by name)")
def _():
    label = project.labels.get("needs review")
    label.new_name = "reviewed"
    label.color = "#00FF00"
    label.save()
    eq([(l.name, l.color, l.description) for l in project.labels.list()], [("reviewed", "#00FF00", "to read")])


@walk.check("labels", "label.subscribe() has no v3 route in the slice: 404")
def _():
    fails_with(lambda: project.labels.get("reviewed").subscribe(), 404)


@walk.check("labels", "label.delete() removes it (DELETE with the name in the query)")
def _():
    project.labels.get("reviewed").delete()
    eq(project.labels.list(), [])


@walk.check("deploy_keys", "keys.create() adds a key")
def _():
    key = project.keys.create({"title": "from python", "key": i["new_key"]})
    has(key.as_dict(), {"title": "from python", "key": i["new_key"]})
    state["key"] = key.id


@walk.check("deploy_keys", "keys.get() reads it")
def _():
    has(project.keys.get(state["key"]).as_dict(), {"id": state["key"], "title": "from python", "key": i["new_key"]})


@walk.check("deploy_keys", "keys.enable() enables another project's key (201)")
def _():
    project.keys.enable(i["other_key"]["id"])
    eq(sorted(k.id for k in project.keys.list()), sorted([state["key"], i["other_key"]["id"]]))


@walk.check("deploy_keys", "keys.disable() disables it again (200)")
def _():
    project.keys.disable(i["other_key"]["id"])
    eq([k.id for k in project.keys.list()], [state["key"]])


@walk.check("deploy_keys", "keys.delete() removes the key")
def _():
    project.keys.delete(state["key"])
    eq(project.keys.list(), [])


@walk.check("deploy_keys", "DeployKey list (admin) shows every key")
def _():
    eq([k.id for k in root.deploykeys.list()], [i["other_key"]["id"]])


@walk.check("services", "service.save() sets slack by GitLab's name")
def _():
    slack = project.services.get(service_name="slack")
    slack.webhook = "https://hooks.example.com/python"
    slack.username = "py-bot"
    slack.channel = "#python"
    slack.save()
    got = project.services.get(service_name="slack").as_dict()
    has(got, {"active": True, "title": "Team chat"})
    eq(got["properties"], {"webhook": "https://hooks.example.com/python", "username": "py-bot", "channel": "#python"})


@walk.check("services", "service.save() keeps a secret out of the answer (asana)")
def _():
    asana = project.services.get(service_name="asana")
    asana.api_key = "asana-secret"
    asana.restrict_to_branch = "master"
    asana.save()
    eq(project.services.get(service_name="asana").properties, {"restrict_to_branch": "master"})


@walk.check("services", "service.delete() clears it")
def _():
    project.services.get(service_name="slack").delete()
    has(project.services.get(service_name="slack").as_dict(), {"active": False, "properties": {}})


@walk.check("snippets", "snippets.create() makes a snippet")
def _():
    s = project.snippets.create({"title": "from python", "file_name": "hello.py", "code": "print(1)\n", "visibility_level": 10})
    has(s.as_dict(), {"title": "from python", "file_name": "hello.py", "expires_at": None})
    eq(s.author.id, owner["id"])
    state["snippet"] = s.id


@walk.check("snippets", "snippets.list() and get() read it")
def _():
    eq([s.id for s in project.snippets.list()], [state["snippet"]])
    has(project.snippets.get(state["snippet"]).as_dict(), {"id": state["snippet"], "title": "from python"})


@walk.check("snippets", "snippet.save() changes its code")
def _():
    s = project.snippets.get(state["snippet"])
    s.code = "print(2)\n"
    s.save()
    eq(project.snippets.get(state["snippet"]).content(), b"print(2)\n")


@walk.check("snippets", "snippet.delete() removes it")
def _():
    project.snippets.get(state["snippet"]).delete()
    fails_with(lambda: project.snippets.get(state["snippet"]), 404)


walk.summary()
