# The builds endpoints through a real v3 client, the ruby-gitlab gem (Debian ruby-gitlab):
#   ruby ruby-gitlab-builds.rb ENDPOINT TOKEN PROJECT_ID RUNNING_BUILD_ID ARTIFACTS_BUILD_ID SHA
# prints what the gem read, as JSON, for test/e2e/builds.spec.ts to check.
require 'gitlab'
require 'json'
endpoint, token, pid, running, art, sha = ARGV
g = Gitlab.client(endpoint: endpoint, private_token: token)
out = {}
out['scoped'] = g.builds(pid.to_i, scope: %w[running pending]).map { |b| [b.id, b.status] }
out['commit'] = g.commit_builds(pid.to_i, sha).map(&:id)
b = g.build(pid.to_i, art.to_i)
out['build'] = { 'id' => b.id, 'name' => b.name, 'artifacts' => b.artifacts_file.to_h, 'short_id' => b.commit.short_id, 'user' => b.user && b.user.username }
f = g.build_artifacts(pid.to_i, art.to_i)
out['file'] = { 'filename' => f.filename, 'size' => f.read.bytesize }
out['cancel'] = g.build_cancel(pid.to_i, running.to_i).status
r = g.build_retry(pid.to_i, running.to_i)
out['retry'] = [r.id, r.status]
e = g.build_erase(pid.to_i, art.to_i)
out['erase'] = [e.id, e.download_url]
puts JSON.generate(out)
