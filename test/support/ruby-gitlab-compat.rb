# A script written for GitLab 8.16, through the ruby-gitlab gem (Debian ruby-gitlab): GitLab's
# service names, the projects list, a users search, a member (and a members search), snippets, a commit's builds by an
# abbreviated id, an admin's users, sudo, and enabling a deploy key of another project by id.
#   ruby ruby-gitlab-compat.rb ENDPOINT ROOT_TOKEN OWNER_TOKEN PROJECT_ID PROJECT_NAME MEMBER_ID MEMBER_USERNAME SHA BUILD_ID KEY_ID
# prints what the gem read, as JSON (the entities as received), for test/e2e/gitlab-clients.spec.ts to check.
require 'gitlab'
require 'json'
endpoint, root_token, owner_token, pid, project_name, member_id, member_username, sha, build_id, key_id = ARGV
pid = pid.to_i
g = Gitlab.client(endpoint: endpoint, private_token: owner_token)
root = Gitlab.client(endpoint: endpoint, private_token: root_token)
out = {}

# Integrations by GitLab's names (the gem turns :drone_ci into drone-ci).
out['put'] = {
  'slack' => g.change_service(pid, :slack, webhook: 'https://hooks.example.com/services/T0/B0/x', username: 'ci-bot', channel: '#builds'),
  'asana' => g.change_service(pid, :asana, api_key: 'asana-secret-key', restrict_to_branch: 'master,release'),
  'irker' => g.change_service(pid, :irker, recipients: 'irc://irc.example.net/#dev', server_port: 6659, colorize_messages: true),
  'hipchat' => g.change_service(pid, :hipchat, token: 'hipchat-secret', color: 'pink', server: 'https://chat.example.com'),
  'pushover' => g.change_service(pid, :pushover, api_key: 'app-key', user_key: 'user-key', priority: '2', sound: 'my-sound'),
  'bamboo' => g.change_service(pid, :bamboo, bamboo_url: 'https://bamboo.example.com', build_key: 'PLAN', username: 'ci', password: 'bamboo-pass'),
  'drone_ci' => g.change_service(pid, :drone_ci, token: 'drone-token', drone_url: 'https://drone.example.com'),
  'jira' => g.change_service(pid, :jira, url: 'https://jira.example.com', project_key: 'PROJ', username: 'u', password: 'p')
}
out['get'] = %w[slack team-chat asana irker hipchat pushover bamboo build-server-a drone_ci jira].to_h { |s| [s, g.service(pid, s).to_h] }
out['delete_irker'] = g.delete_service(pid, :irker)
out['irker_after'] = g.service(pid, :irker).to_h
begin
  g.service(pid, :bugzilla)
  out['unknown'] = 'no error'
rescue Gitlab::Error::NotFound => e
  out['unknown'] = [e.response_status, e.response_message]
end

# The projects list, a project, a users search, a member, the members a search finds.
out['projects'] = g.projects(search: project_name).map(&:to_h)
out['project'] = g.project(pid).to_h
out['user_search'] = g.user_search(member_username).map(&:to_h)
out['users_by_username'] = g.users(username: member_username).map(&:to_h)
out['member'] = g.team_member(pid, member_id.to_i).to_h
out['members_query'] = g.team_members(pid, query: member_username.upcase).map(&:to_h)

# Snippets and builds.
out['snippet'] = g.create_snippet(pid, title: 'From the gem', file_name: 'gem.rb', code: "puts 1\n", visibility_level: 10).to_h
out['snippets'] = g.snippets(pid).map(&:to_h)
out['commit_builds'] = g.commit_builds(pid, sha[0, 7]).map(&:to_h)
out['build'] = g.build(pid, build_id.to_i).to_h

# Deploy keys: a key of another of the owner's projects, enabled here by id (GitLab 8.11+), and
# again (the project has it: the same answer, one link); an unknown key. Before the sudo clients
# below: the gem keeps `sudo` in class-wide defaults, so every client made after one sends it.
out['enabled_key'] = g.enable_deploy_key(pid, key_id.to_i).to_h
out['enabled_again'] = g.enable_deploy_key(pid, key_id.to_i).to_h
out['deploy_keys'] = g.deploy_keys(pid).map(&:to_h)
begin
  g.enable_deploy_key(pid, 999_999_999)
  out['enable_unknown'] = 'no error'
rescue Gitlab::Error::NotFound => e
  out['enable_unknown'] = [e.response_status, e.response_message]
end

# An admin's users.
stamp = Time.now.to_i.to_s + rand(1000).to_s
created = root.create_user("gem#{stamp}@example.com", 'gem-password-1', "gem#{stamp}", name: "Gem #{stamp}", location: 'Lisbon', organization: 'Gems')
out['created_user'] = created.to_h
out['admin_user'] = root.user(created.id).to_h
out['session'] = Gitlab.client(endpoint: endpoint, private_token: '').session("gem#{stamp}@example.com", 'gem-password-1').to_h

# Sudo: the admin acting as the member, and the owner, who may not (the gem sends it as a parameter).
out['sudo_user'] = Gitlab.client(endpoint: endpoint, private_token: root_token, sudo: member_username).user.to_h
begin
  Gitlab.client(endpoint: endpoint, private_token: owner_token, sudo: member_username).user
  out['sudo_refused'] = 'no error'
rescue Gitlab::Error::Forbidden => e
  out['sudo_refused'] = [e.response_status, e.response_message]
end
puts JSON.generate(out)
