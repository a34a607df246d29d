"""python-gitlab, the current release, against /api/v4: the accounts a script needs, what anyone
reads of a public project without a token, jobs and pipelines (the latest included), job artifacts,
labels (search and subscribe included), deploy keys (enable included), integrations (in GitLab's
current fields) and snippets, as GitLab's v4 documents them; run by test/e2e/clients-v4.spec.ts
(docs/clients.md)."""
import hashlib
from urllib.parse import quote

import gitlab

from walk import Walk, eq, fails_with, has

walk = Walk()
i = walk.input
gl = gitlab.Gitlab(i["url"], private_token=i["owner"]["token"])
root = gitlab.Gitlab(i["url"], private_token=i["root_token"])
owner, member, jobs = i["owner"], i["member"], i["builds"]
pwn = i["project"]["path_with_namespace"]
web = i["url"] + "/" + pwn
project = gl.projects.get(i["project"]["id"], lazy=True)
state = {}


@walk.check("users", "auth() reads the current user (is_admin only for an admin, as GitLab)")
def _():
    gl.auth()
    has(gl.user.asdict(), {"id": owner["id"], "username": owner["username"], "state": "active"})
    eq("is_admin" in gl.user.asdict(), False)
    root.auth()
    eq(root.user.is_admin, True)


@walk.check("users", "users.list(username=) finds one user")
def _():
    eq([(u.id, u.username, u.web_url) for u in gl.users.list(username=member["username"])], [(member["id"], member["username"], i["url"] + "/" + member["username"])])


@walk.check("users", "users.get() reads a user")
def _():
    has(gl.users.get(member["id"]).asdict(), {"id": member["id"], "username": member["username"], "name": "User " + member["username"], "state": "active"})


@walk.check("projects", "projects.create() makes an internal project")
def _():
    p = gl.projects.create({"name": i["new_project_name"], "visibility": "internal"})
    has(p.asdict(), {"name": i["new_project_name"], "visibility": "internal", "path_with_namespace": owner["username"] + "/" + p.path})
    has(p.namespace, {"path": owner["username"], "kind": "user"})
    state["new_project"] = p.id


@walk.check("projects", "projects.get() reads it")
def _():
    has(gl.projects.get(state["new_project"]).asdict(), {"id": state["new_project"], "visibility": "internal"})


@walk.check("projects", "projects.list(search=, get_all=True) finds it")
def _():
    eq([p.id for p in gl.projects.list(search=i["new_project_name"], get_all=True)], [state["new_project"]])


@walk.check("anonymous", "Gitlab() without a token lists the public projects and reads one, without permissions")
def _():
    pub = gl.projects.create({"name": i["new_project_name"] + " public", "visibility": "public"})
    pub.labels.create({"name": "bug", "color": "#d9534f", "description": "needs a review"})
    pub.labels.create({"name": "docs", "color": "#eeeeee"})
    state["public"] = pub.id
    anon = gitlab.Gitlab(i["url"])
    state["anon"] = anon
    listed = [p.id for p in anon.projects.list(get_all=True)]
    eq((pub.id in listed, i["project"]["id"] in listed, state["new_project"] in listed), (True, False, False))
    shown = anon.projects.get(pub.id).asdict()
    has(shown, {"id": pub.id, "visibility": "public", "default_branch": "master"})
    eq("permissions" in shown, False)
    eq(anon.projects.list(owned=True, get_all=True), [])


@walk.check("anonymous", "Gitlab() without a token reads a public project's labels, searched")
def _():
    labels = state["anon"].projects.get(state["public"], lazy=True).labels
    eq([(l.name, l.subscribed) for l in labels.list(get_all=True)], [("bug", False), ("docs", False)])
    eq([l.name for l in labels.list(search="review", get_all=True)], ["bug"])


@walk.check("anonymous", "Gitlab() without a token: 404 Project Not Found for an internal project, 401 for a write")
def _():
    anon = state["anon"]
    fails_with(lambda: anon.projects.get(i["project"]["id"]), 404, "404 Project Not Found")
    fails_with(lambda: anon.projects.get(i["project"]["id"], lazy=True).jobs.list(get_all=True), 404, "404 Project Not Found")
    fails_with(lambda: anon.projects.get(state["public"], lazy=True).labels.create({"name": "x", "color": "#000"}), 401, "401 Unauthorized")


@walk.check("members", "members.create() adds a developer")
def _():
    has(project.members.create({"user_id": member["id"], "access_level": 30}).asdict(), {"id": member["id"], "username": member["username"], "access_level": 30})


@walk.check("members", "members.list() lists the owner and the developer")
def _():
    eq(sorted((m.id, m.access_level) for m in project.members.list(get_all=True)), sorted([(owner["id"], 50), (member["id"], 30)]))


@walk.check("members", "members.get() reads one")
def _():
    has(project.members.get(member["id"]).asdict(), {"id": member["id"], "access_level": 30})


def pipeline_of(job_id):
    return project.jobs.get(job_id).pipeline


@walk.check("jobs", "jobs.list(get_all=True) lists every job, newest first")
def _():
    eq([j.id for j in project.jobs.list(get_all=True)], [jobs["lint"], jobs["rspec"], jobs["rubocop"], jobs["build"]])


@walk.check("jobs", "jobs.list(scope=[running, pending]) filters by state")
def _():
    eq([(j.id, j.status) for j in project.jobs.list(scope=["running", "pending"], get_all=True)], [(jobs["lint"], "pending"), (jobs["rspec"], "running")])


@walk.check("jobs", "jobs.list(per_page=1, get_all=True) follows the Link header through every page")
def _():
    eq([j.id for j in project.jobs.list(per_page=1, get_all=True)], [jobs["lint"], jobs["rspec"], jobs["rubocop"], jobs["build"]])


@walk.check("jobs", "jobs.list(pagination=keyset, order_by=id, sort=desc) walks keyset pages")
def _():
    pages = project.jobs.list(pagination="keyset", order_by="id", sort="desc", per_page=3, iterator=True)
    eq([j.id for j in pages], [jobs["lint"], jobs["rspec"], jobs["rubocop"], jobs["build"]])


@walk.check("jobs", "jobs.get() reads a job with v4's fields")
def _():
    j = project.jobs.get(jobs["rubocop"]).asdict()
    has(j, {"id": jobs["rubocop"], "name": "rubocop", "status": "failed", "ref": "master", "stage": "test", "tag": False, "web_url": "%s/-/jobs/%d" % (web, jobs["rubocop"])})
    has(j["commit"], {"id": i["sha_a"], "short_id": i["sha_a"][:8]})
    has(j["pipeline"], {"project_id": i["project"]["id"], "ref": "master", "sha": i["sha_a"], "status": "failed"})
    eq(j["user"]["username"], owner["username"])
    eq(j["artifacts_file"], {"filename": "rubocop-artifacts.zip", "size": i["artifacts"]["rubocop"]["size"]})
    eq([a for a in j["artifacts"] if a["file_type"] == "archive"], [{"file_type": "archive", "size": i["artifacts"]["rubocop"]["size"], "filename": "rubocop-artifacts.zip", "file_format": "zip"}])
    eq(sorted(k for k in ("failure_reason", "tag_list", "queued_duration", "allow_failure") if k in j), ["allow_failure", "failure_reason", "queued_duration", "tag_list"])


@walk.check("jobs", "job.trace() reads the log")
def _():
    eq(project.jobs.get(jobs["rubocop"], lazy=True).trace(), i["trace"].encode())


@walk.check("pipelines", "pipelines.list() lists one pipeline per commit and ref, newest first")
def _():
    got = [(p.id, p.sha, p.ref, p.status) for p in project.pipelines.list(get_all=True)]
    ids = [pipeline_of(jobs[name])["id"] for name in ("rspec", "rubocop", "build")]
    state["pipelines"] = dict(zip(("feature", "failed", "success"), ids))
    eq(got, [(ids[0], i["sha_b"], "feature", "running"), (ids[1], i["sha_a"], "master", "failed"), (ids[2], i["sha_c"], "master", "success")])


@walk.check("pipelines", "pipelines.list(ref=master) filters by ref")
def _():
    eq([p.id for p in project.pipelines.list(ref="master", get_all=True)], [state["pipelines"]["failed"], state["pipelines"]["success"]])


@walk.check("pipelines", "pipelines.get() reads one")
def _():
    pid = state["pipelines"]["success"]
    has(project.pipelines.get(pid).asdict(), {"id": pid, "sha": i["sha_c"], "ref": "master", "status": "success", "web_url": "%s/-/pipelines/%d" % (web, pid)})


@walk.check("pipelines", "pipelines.latest() reads the default branch's latest pipeline, latest(ref=) a branch's")
def _():
    has(project.pipelines.latest().asdict(), {"id": state["pipelines"]["failed"], "ref": "master", "sha": i["sha_a"], "status": "failed"})
    has(project.pipelines.latest(ref="feature").asdict(), {"id": state["pipelines"]["feature"], "ref": "feature", "status": "running"})
    fails_with(lambda: project.pipelines.latest(ref="no-such-branch"), 404, "404 Not found")


@walk.check("pipelines", "pipeline.jobs.list() lists its jobs, and filters them by scope")
def _():
    pipeline = project.pipelines.get(state["pipelines"]["feature"], lazy=True)
    eq([j.id for j in pipeline.jobs.list(get_all=True)], [jobs["lint"], jobs["rspec"]])
    eq([j.id for j in pipeline.jobs.list(scope="running", get_all=True)], [jobs["rspec"]])


@walk.check("artifacts", "job.artifacts() downloads the archive")
def _():
    eq(hashlib.sha256(project.jobs.get(jobs["rubocop"], lazy=True).artifacts()).hexdigest(), i["artifacts"]["rubocop"]["sha256"])


@walk.check("artifacts", "job.artifact(path) reads one file out of the archive")
def _():
    eq(project.jobs.get(jobs["rubocop"], lazy=True).artifact("report/summary.txt"), i["artifacts"]["rubocop"]["files"]["report/summary.txt"].encode())


@walk.check("artifacts", "artifacts.download(ref, job) takes the latest successful pipeline of the ref")
def _():
    eq(hashlib.sha256(project.artifacts.download("master", "build")).hexdigest(), i["artifacts"]["build"]["sha256"])
    fails_with(lambda: project.artifacts.download("master", "rubocop"), 404)


@walk.check("artifacts", "artifacts.raw(ref, path, job) reads one file of it")
def _():
    eq(project.artifacts.raw("master", "dist/app.txt", "build"), b"app v1\n")


@walk.check("artifacts", "job.keep_artifacts() keeps them")
def _():
    job = project.jobs.get(jobs["build"], lazy=True)
    job.keep_artifacts()
    eq(hashlib.sha256(job.artifacts()).hexdigest(), i["artifacts"]["build"]["sha256"])


@walk.check("artifacts", "job.delete_artifacts() deletes them")
def _():
    job = project.jobs.get(jobs["build"], lazy=True)
    job.delete_artifacts()
    fails_with(lambda: job.artifacts(), 404)
    eq([a["file_type"] for a in project.jobs.get(jobs["build"]).asdict()["artifacts"] if a["file_type"] == "archive"], [])


@walk.check("jobs", "job.cancel() cancels a running job")
def _():
    has(project.jobs.get(jobs["rspec"], lazy=True).cancel(), {"id": jobs["rspec"], "status": "canceled"})


@walk.check("jobs", "job.retry() makes a new pending job in the same pipeline")
def _():
    retried = project.jobs.get(jobs["rspec"], lazy=True).retry()
    has(retried, {"name": "rspec", "status": "pending", "ref": "feature"})
    eq((retried["id"] > jobs["lint"], retried["pipeline"]["id"]), (True, state["pipelines"]["feature"]))


@walk.check("jobs", "job.erase() removes the log and the artifacts")
def _():
    job = project.jobs.get(jobs["rubocop"])
    job.erase()
    fails_with(lambda: job.artifacts(), 404)
    eq(isinstance(project.jobs.get(jobs["rubocop"]).erased_at, str), True)


@walk.check("jobs", "jobs.get() of a job the project does not have: 404")
def _():
    fails_with(lambda: project.jobs.get(999999999), 404)


@walk.check("labels", "labels.create() makes a label with v4's fields")
def _():
    label = project.labels.create({"name": "needs review", "color": "#FF0000", "description": "to read", "priority": 2}).asdict()
    has(label, {"name": "needs review", "color": "#FF0000", "text_color": "#FFFFFF", "description": "to read", "subscribed": False, "priority": 2, "is_project_label": True})
    state["label"] = label["id"]


@walk.check("labels", "labels.list(search=) lists only what the search finds, with_counts adds the counts")
def _():
    project.labels.create({"name": "wontfix", "color": "#cccccc", "description": "never"})
    eq([l.name for l in project.labels.list(search="review", get_all=True)], ["needs review"])
    eq([l.name for l in project.labels.list(search="nothing like it", get_all=True)], [])
    counted = project.labels.list(search="wontfix", with_counts=True, get_all=True)
    eq([(l.name, l.open_issues_count, l.closed_issues_count, l.open_merge_requests_count) for l in counted], [("wontfix", 0, 0, 0)])
    # A script deleting what a search finds deletes that only.
    for label in project.labels.list(search="wontfix", get_all=True):
        label.delete()
    eq([l.name for l in project.labels.list(get_all=True)], ["needs review"])


@walk.check("labels", "labels.get() reads it by title and by id")
def _():
    eq(project.labels.get("needs review").id, state["label"])
    eq(project.labels.get(state["label"]).name, "needs review")


@walk.check("labels", "label.save() renames and recolours it (PUT by name)")
def _():
    label = project.labels.get("needs review")
    label.new_name = "reviewed"
    label.color = "#00FF00"
    label.save()
    eq([(l.id, l.name, l.color) for l in project.labels.list(get_all=True)], [(state["label"], "reviewed", "#00FF00")])


@walk.check("labels", "labels.update() sets its priority")
def _():
    has(project.labels.update("reviewed", {"priority": 5}), {"id": state["label"], "priority": 5})


@walk.check("labels", "label.subscribe() subscribes, and again is 304")
def _():
    label = project.labels.get("reviewed")
    label.subscribe()
    eq(label.subscribed, True)
    fails_with(lambda: label.subscribe(), 304)


@walk.check("labels", "label.unsubscribe() unsubscribes, and again is 304")
def _():
    label = project.labels.get("reviewed")
    label.unsubscribe()
    eq(label.subscribed, False)
    fails_with(lambda: label.unsubscribe(), 304)


@walk.check("labels", "label.delete() removes it")
def _():
    project.labels.get("reviewed").delete()
    eq(project.labels.list(get_all=True), [])


@walk.check("deploy_keys", "keys.create() adds a key that may push, with its fingerprints")
def _():
    key = project.keys.create({"title": "from python", "key": i["new_key"], "can_push": True}).asdict()
    has(key, {"title": "from python", "key": i["new_key"], "can_push": True})
    eq(key["fingerprint_sha256"].startswith("SHA256:"), True)
    state["key"] = key["id"]


@walk.check("deploy_keys", "key.save() renames it and takes push access away")
def _():
    key = project.keys.get(state["key"])
    key.title = "renamed"
    key.can_push = False
    key.save()
    has(project.keys.get(state["key"]).asdict(), {"title": "renamed", "can_push": False})


@walk.check("deploy_keys", "keys.enable() enables another project's key")
def _():
    has(project.keys.enable(i["other_key"]["id"]), {"id": i["other_key"]["id"], "title": i["other_key"]["title"]})
    eq(sorted(k.id for k in project.keys.list(get_all=True)), sorted([state["key"], i["other_key"]["id"]]))


@walk.check("deploy_keys", "deploykeys.list() as an admin shows the instance's keys")
def _():
    eq({state["key"], i["other_key"]["id"]} <= {k.id for k in root.deploykeys.list(get_all=True)}, True)


@walk.check("deploy_keys", "key.delete() removes it from the project")
def _():
    project.keys.get(state["key"]).delete()
    eq([k.id for k in project.keys.list(get_all=True)], [i["other_key"]["id"]])


@walk.check("integrations", "integrations.update() sets slack with its notification settings and event flags")
def _():
    got = project.integrations.update(
        "slack",
        {
            "webhook": "https://hooks.example.com/python",
            "username": "py-bot",
            "channel": "#python",
            "notify_only_broken_pipelines": False,
            "branches_to_be_notified": "default",
            "pipeline_channel": "#ci",
            "push_events": False,
            "deployment_events": True,
        },
    )
    has(got, {"slug": "slack", "active": True, "push_events": False, "deployment_events": True})


@walk.check("integrations", "integrations.get() reads every setting back but the webhook, and services.get() is the same record")
def _():
    slack = project.integrations.get("slack").asdict()
    has(slack, {"slug": "slack", "active": True, "push_events": False, "deployment_events": True})
    has(
        slack["properties"],
        {"username": "py-bot", "channel": "#python", "notify_only_broken_pipelines": False, "branches_to_be_notified": "default", "pipeline_channel": "#ci", "push_channel": None},
    )
    eq("webhook" in slack["properties"], False)
    eq(project.services.get("slack").asdict(), slack)


@walk.check("integrations", "integration.save() sends only what changed: without the required webhook 400, as GitLab; with it, saved")
def _():
    slack = project.integrations.get("slack")
    slack.channel = "#builds"
    fails_with(lambda: slack.save(), 400, "webhook is missing")
    slack.webhook = "https://hooks.example.com/python"
    slack.save()
    eq(project.integrations.get("slack").properties["channel"], "#builds")


@walk.check("integrations", "integrations.update() sets jira with url, username and password, read back without the password")
def _():
    project.integrations.update("jira", {"url": "https://jira.example.com", "username": "py-bot", "password": "jira-secret", "commit_events": False})
    jira = project.integrations.get("jira").asdict()
    has(jira, {"slug": "jira", "active": True, "commit_events": False, "merge_requests_events": True})
    has(jira["properties"], {"url": "https://jira.example.com", "username": "py-bot", "jira_auth_type": 0, "api_url": None})
    eq("password" in jira["properties"], False)


@walk.check("integrations", "a secret is never read back (asana's api_key); drone-ci takes drone_url")
def _():
    project.integrations.update("asana", {"api_key": "asana-secret", "restrict_to_branch": "master"})
    eq("api_key" in project.integrations.get("asana").properties, False)
    project.integrations.update("drone-ci", {"token": "drone-secret", "drone_url": "https://drone.example.com"})
    has(project.integrations.get("drone-ci").properties, {"drone_url": "https://drone.example.com"})


@walk.check("integrations", "integrations.list() lists the active ones")
def _():
    eq(sorted(x.slug for x in project.integrations.list(get_all=True)), ["asana", "drone-ci", "jira", "slack"])


@walk.check("integrations", "integration.delete() disables it")
def _():
    project.integrations.get("slack").delete()
    eq(project.integrations.get("slack").active, False)
    eq(sorted(x.slug for x in project.integrations.list(get_all=True)), ["asana", "drone-ci", "jira"])


@walk.check("snippets", "snippets.create() with two files")
def _():
    s = project.snippets.create(
        {"title": "two files", "visibility": "internal", "files": [{"file_path": "hello.py", "content": "print(1)\n"}, {"file_path": "docs/README.md", "content": "# hi\n"}]}
    ).asdict()
    has(s, {"title": "two files", "visibility": "internal", "file_name": "hello.py", "project_id": i["project"]["id"]})
    eq((s["web_url"], s["raw_url"]), ("%s/-/snippets/%d" % (web, s["id"]), "%s/-/snippets/%d/raw" % (web, s["id"])))
    eq([f["path"] for f in s["files"]], ["hello.py", "docs/README.md"])
    state["snippet"] = s["id"]


@walk.check("snippets", "snippets.create() with the deprecated file_name and content")
def _():
    s = project.snippets.create({"title": "one file", "file_name": "one.rb", "content": "puts 1\n", "visibility": "private"})
    has(s.asdict(), {"file_name": "one.rb", "visibility": "private"})
    eq(s.content(), b"puts 1\n")
    state["old_snippet"] = s.id


@walk.check("snippets", "snippets.list() and get() read them")
def _():
    eq(sorted(s.id for s in project.snippets.list(get_all=True)), sorted([state["snippet"], state["old_snippet"]]))
    s = project.snippets.get(state["snippet"])
    eq((s.id, s.title, s.author["id"]), (state["snippet"], "two files", owner["id"]))


@walk.check("snippets", "snippet.content() reads the first file; files/:ref/:path/raw reads any")
def _():
    eq(project.snippets.get(state["snippet"], lazy=True).content(), b"print(1)\n")
    raw = gl.http_get("/projects/%d/snippets/%d/files/main/%s/raw" % (i["project"]["id"], state["snippet"], quote("docs/README.md", safe="")))
    eq(raw.content, b"# hi\n")


@walk.check("snippets", "snippet.save() updates, moves and deletes files")
def _():
    s = project.snippets.get(state["snippet"])
    s.files = [
        {"action": "update", "file_path": "hello.py", "content": "print(2)\n"},
        {"action": "move", "previous_path": "docs/README.md", "file_path": "README.md"},
        {"action": "create", "file_path": "extra.txt", "content": "more\n"},
    ]
    s.save()
    eq([f["path"] for f in project.snippets.get(state["snippet"]).files], ["hello.py", "README.md", "extra.txt"])
    s = project.snippets.get(state["snippet"])
    s.files = [{"action": "delete", "file_path": "extra.txt"}]
    s.save()
    eq([f["path"] for f in project.snippets.get(state["snippet"]).files], ["hello.py", "README.md"])
    eq(project.snippets.get(state["snippet"], lazy=True).content(), b"print(2)\n")


@walk.check("snippets", "snippet.delete() removes it")
def _():
    project.snippets.get(state["snippet"]).delete()
    fails_with(lambda: project.snippets.get(state["snippet"]), 404)


walk.summary()
