# The ruby-gitlab gem (Debian ruby-gitlab) with its endpoint at /api/v4: jobs and their artifacts,
# labels, deploy keys, services and snippets, each call checked as it goes (docs/clients.md).
# Reads its input (URL, tokens, the ids test/e2e/clients-v4.spec.ts prepared) as JSON on stdin;
# prints `FAIL <resource>: <call>: <why>` for a call that failed and one
# `<resource>: N passed, N failed` line per resource.
require 'gitlab'
require 'json'
require 'digest'
require 'net/http'

input = JSON.parse($stdin.read)
RESULTS = {}

def check(resource, name)
  counts = (RESULTS[resource] ||= [0, 0])
  yield
  counts[0] += 1
rescue StandardError => e
  counts[1] += 1
  line = e.backtrace_locations&.find { |l| l.path == __FILE__ }&.lineno
  puts "FAIL #{resource}: #{name}: #{e.class}: #{e.message.lines.first.to_s.chomp} (line #{line})"
end

def eq(actual, expected)
  raise "expected #{expected.inspect}, got #{actual.inspect}" unless actual == expected
end

def fails_with(klass)
  yield
  raise "expected #{klass}, the call succeeded"
rescue klass
  nil
end

g = Gitlab.client(endpoint: "#{input['url']}/api/v4", private_token: input['owner']['token'])
pid = input['project']['id']
jobs = input['builds']
web = "#{input['url']}/#{input['project']['path_with_namespace']}"
state = {}

check('accounts', 'user reads the current user') { eq([g.user.id, g.user.username], [input['owner']['id'], input['owner']['username']]) }
check('accounts', 'project reads the project in v4 fields') do
  p = g.project(pid)
  eq([p.id, p.visibility, p.namespace.kind], [pid, 'internal', 'user'])
end

check('jobs', 'jobs lists them, newest first') { eq(g.jobs(pid).auto_paginate.map(&:id), jobs.values_at('lint', 'rspec', 'rubocop', 'build')) }
check('jobs', 'jobs(scope: [running, pending]) filters by state') do
  eq(g.jobs(pid, scope: %w[running pending]).map { |j| [j.id, j.status] }, [[jobs['lint'], 'pending'], [jobs['rspec'], 'running']])
end
check('jobs', 'job reads one with its pipeline and web_url') do
  j = g.job(pid, jobs['rubocop'])
  eq([j.name, j.status, j.stage, j.pipeline.sha, j.pipeline.status, j.web_url], ['rubocop', 'failed', 'test', input['sha_a'], 'failed', "#{web}/-/jobs/#{jobs['rubocop']}"])
  state['feature_pipeline'] = g.job(pid, jobs['rspec']).pipeline.id
end
check('jobs', 'pipeline_jobs lists a pipeline\'s jobs') { eq(g.pipeline_jobs(pid, state['feature_pipeline']).map(&:id), jobs.values_at('lint', 'rspec')) }
check('jobs', 'job_trace reads the log') { eq(g.job_trace(pid, jobs['rubocop']), input['trace']) }
check('jobs', 'job_artifacts downloads the archive') do
  eq(Digest::SHA256.hexdigest(g.job_artifacts(pid, jobs['rubocop'])), input['artifacts']['rubocop']['sha256'])
end
check('jobs', 'download_job_artifact_file reads one file of the archive') do
  summary = input['artifacts']['rubocop']['files']['report/summary.txt']
  eq(g.download_job_artifact_file(pid, jobs['rubocop'], 'report/summary.txt').read, summary.b)
end
check('jobs', 'job_artifacts_download takes the latest successful pipeline of the ref') do
  eq(Digest::SHA256.hexdigest(g.job_artifacts_download(pid, 'master', 'build').read), input['artifacts']['build']['sha256'])
end
# The gem tells a file from an error by the body's Ruby encoding, and Ruby's HTTP client reads an
# ASCII-only body as UTF-8: such a file is parsed as JSON and raises (docs/clients.md#client-bugs).
check('jobs', 'download_branch_artifact_file of an ASCII-only file: the gem raises; the same request answers the file') do
  fails_with(Gitlab::Error::Parsing) { g.download_branch_artifact_file(pid, 'master', 'dist/app.txt', 'build') }
  uri = URI("#{input['url']}/api/v4/projects/#{pid}/jobs/artifacts/master/raw/dist/app.txt?job=build")
  res = Net::HTTP.get_response(uri, 'PRIVATE-TOKEN' => input['owner']['token'])
  eq([res.code, res.body], ['200', "app v1\n"])
end
check('jobs', 'job_artifacts_keep answers the job') { eq(g.job_artifacts_keep(pid, jobs['build']).id, jobs['build']) }
check('jobs', 'job_artifacts_delete deletes them') do
  g.job_artifacts_delete(pid, jobs['build'])
  fails_with(Gitlab::Error::NotFound) { g.job_artifacts(pid, jobs['build']) }
end
check('jobs', 'job_cancel cancels a running job') { eq(g.job_cancel(pid, jobs['rspec']).status, 'canceled') }
check('jobs', 'job_retry makes a new pending job') do
  r = g.job_retry(pid, jobs['rspec'])
  eq([r.name, r.status, r.id > jobs['lint']], ['rspec', 'pending', true])
end
check('jobs', 'job_erase removes the log and the artifacts') do
  eq(g.job_erase(pid, jobs['rubocop']).id, jobs['rubocop'])
  fails_with(Gitlab::Error::NotFound) { g.job_artifacts(pid, jobs['rubocop']) }
end

check('labels', 'create_label makes a label (form fields)') do
  l = g.create_label(pid, 'needs-review', '#FF0000', description: 'to read', priority: 2)
  eq([l.name, l.color, l.description, l.priority, l.subscribed], ['needs-review', '#FF0000', 'to read', 2, false])
  state['label'] = l.id
end
check('labels', 'edit_label renames it (PUT by name)') do
  eq(g.edit_label(pid, 'needs-review', new_name: 'reviewed', color: '#00FF00').id, state['label'])
  eq(g.labels(pid).map { |l| [l.id, l.name, l.color] }, [[state['label'], 'reviewed', '#00FF00']])
end
check('labels', 'subscribe_to_label subscribes; again is 304 (an empty answer)') do
  eq(g.subscribe_to_label(pid, 'reviewed').subscribed, true)
  eq(g.subscribe_to_label(pid, 'reviewed').to_h, {})
end
check('labels', 'unsubscribe_from_label unsubscribes') { eq(g.unsubscribe_from_label(pid, 'reviewed').subscribed, false) }
check('labels', 'delete_label removes it') do
  g.delete_label(pid, 'reviewed')
  eq(g.labels(pid).to_a, [])
end

check('deploy_keys', 'create_deploy_key adds a key that may push') do
  k = g.create_deploy_key(pid, 'from ruby', input['new_key'], can_push: true)
  eq([k.title, k.key, k.can_push], ['from ruby', input['new_key'], true])
  state['key'] = k.id
end
check('deploy_keys', 'edit_deploy_key renames it and takes push access away') do
  g.edit_deploy_key(pid, state['key'], 'renamed', can_push: false)
  k = g.deploy_key(pid, state['key'])
  eq([k.title, k.can_push], ['renamed', false])
end
check('deploy_keys', 'enable_deploy_key enables another project\'s key') do
  eq(g.enable_deploy_key(pid, input['other_key']['id']).id, input['other_key']['id'])
  eq(g.deploy_keys(pid).map(&:id).sort, [state['key'], input['other_key']['id']].sort)
end
check('deploy_keys', 'disable_deploy_key posts to a path v4 does not have: 404') do
  fails_with(Gitlab::Error::NotFound) { g.disable_deploy_key(pid, input['other_key']['id']) }
end
check('deploy_keys', 'delete_deploy_key removes each from the project') do
  g.delete_deploy_key(pid, input['other_key']['id'])
  g.delete_deploy_key(pid, state['key'])
  eq(g.deploy_keys(pid).to_a, [])
end

check('services', 'change_service sets slack under /services') do
  g.change_service(pid, :slack, webhook: 'https://hooks.example.com/ruby', username: 'rb-bot', channel: '#ruby')
  s = g.service(pid, :slack)
  # GitLab's current API shows every setting but the webhook, which holds a credential.
  eq([s.slug, s.active, s.properties.to_h.key?('webhook'), s.properties.channel, s.properties.notify_only_broken_pipelines], ['slack', true, false, '#ruby', true])
end
check('services', 'change_service(:drone_ci) reaches drone-ci, with its secret kept out') do
  g.change_service(pid, :drone_ci, token: 'drone-secret', drone_url: 'https://drone.example.com')
  eq(g.service(pid, :drone_ci).properties.to_h, { 'drone_url' => 'https://drone.example.com', 'enable_ssl_verification' => true })
end
check('services', 'delete_service disables it') do
  g.delete_service(pid, :slack)
  eq(g.service(pid, :slack).active, false)
end

check('snippets', 'create_snippet with files[] (form fields)') do
  s = g.create_snippet(pid, title: 'from ruby', visibility: 'internal', files: [{ file_path: 'hello.rb', content: "puts 1\n" }])
  eq([s.title, s.visibility, s.file_name, s.web_url], ['from ruby', 'internal', 'hello.rb', "#{web}/-/snippets/#{s.id}"])
  state['snippet'] = s.id
end
check('snippets', 'create_snippet with the deprecated file_name and content') do
  s = g.create_snippet(pid, title: 'old style', file_name: 'old.rb', content: "puts 0\n", visibility: 'private')
  eq([s.file_name, g.snippet_content(pid, s.id)], ['old.rb', "puts 0\n"])
end
check('snippets', 'snippets and snippet read them') do
  eq(g.snippets(pid).map(&:id).include?(state['snippet']), true)
  eq(g.snippet(pid, state['snippet']).author.id, input['owner']['id'])
end
check('snippets', 'edit_snippet updates a file') do
  g.edit_snippet(pid, state['snippet'], title: 'edited', files: [{ action: 'update', file_path: 'hello.rb', content: "puts 2\n" }])
  eq([g.snippet(pid, state['snippet']).title, g.snippet_content(pid, state['snippet'])], ['edited', "puts 2\n"])
end
check('snippets', 'delete_snippet removes it') do
  g.delete_snippet(pid, state['snippet'])
  fails_with(Gitlab::Error::NotFound) { g.snippet(pid, state['snippet']) }
end

RESULTS.each { |resource, (passed, failed)| puts "#{resource}: #{passed} passed, #{failed} failed" }
