#!/usr/bin/env bash
# The commands of package.json a newcomer types (`npm start`, `npm run start:cluster`, `npm test`,
# …), whatever Node the machine has. Each first makes sure of the Node the project runs on (the
# release .nvmrc names: when the `node` on PATH is older, that release from the npm registry, once,
# into the user's cache), then of the dependencies (`npm ci` when node_modules is missing or older
# than package-lock.json), then runs:
#
#   bash scripts/local.sh start              npm start: build, then every service in one process
#   bash scripts/local.sh cluster            npm run start:cluster (scripts/start-cluster.ts)
#   bash scripts/local.sh test [jest args]   npm test: every peer of the suite (.ci/peers), then jest
#   bash scripts/local.sh tool FILE [args]   npm run seed, bench: the tools built (build:tools), then dist/FILE.js
#   bash scripts/local.sh run COMMAND…       anything else on that Node (jest for one spec or project)
#
# Sourced (`. scripts/local.sh`), it only defines its functions: .ci/run calls ensure_node, the test
# run's global setup deps_fresh (a command the suite starts must never reinstall under it).
# LOCAL_NODE_DIR chooses where the fetched Node goes (default ~/.cache/gitlab-v3-service/node-<release>).

LOCAL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_RELEASE="$(tr -d ' v\n' <"$LOCAL_ROOT/.nvmrc")"
NODE_MAJOR="${NODE_RELEASE%%.*}"

say() { printf '%s\n' "$*" >&2; }

# The major of a node binary (0: none, or one that does not run).
node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Puts a Node of the project's major first on PATH: the one there already, or the release .nvmrc
# names, fetched once from the npm registry (the `node` package pulls its binary package).
ensure_node() {
	[ "$(node_major)" -ge "$NODE_MAJOR" ] && return 0
	local dir="${LOCAL_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gitlab-v3-service/node-$NODE_RELEASE}"
	if [ "$(node_major "$dir/node_modules/.bin/node")" -lt "$NODE_MAJOR" ]; then
		local fix="install Node $NODE_MAJOR yourself (\`nvm install\` reads .nvmrc) and run the command again"
		command -v npm >/dev/null || { say "Node $NODE_MAJOR is needed and there is no npm to fetch it: $fix."; return 1; }
		say "Node $NODE_MAJOR is needed; the node on PATH is $(node --version 2>/dev/null || echo missing)." \
			"Fetching node@$NODE_RELEASE from the npm registry into $dir (once, about 20 s)…"
		local tmp="$dir.$$"
		mkdir -p "$(dirname "$dir")"
		if ! npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --fetch-retries=1 --prefix "$tmp" "node@$NODE_RELEASE" >"$tmp.log" 2>&1 ||
			[ "$(node_major "$tmp/node_modules/.bin/node")" -lt "$NODE_MAJOR" ]; then
			say "Could not fetch Node $NODE_RELEASE (npm said: $(tail -n 3 "$tmp.log" | tr '\n' ' '))." "Fix: $fix."
			rm -rf "$tmp" "$tmp.log"
			return 1
		fi
		rm -rf "$dir" "$tmp.log"
		mv "$tmp" "$dir"
	fi
	export PATH="$dir/node_modules/.bin:$PATH"
}

# Whether node_modules is there and not older than the lockfile (npm rewrites node_modules/.package-lock.json at each install).
deps_fresh() {
	[ -f "$LOCAL_ROOT/node_modules/.package-lock.json" ] && [ ! "$LOCAL_ROOT/package-lock.json" -nt "$LOCAL_ROOT/node_modules/.package-lock.json" ]
}

# npm ci when they are not.
ensure_deps() {
	deps_fresh && return 0
	say "Installing the dependencies (npm ci; about 90 s the first time)…"
	(cd "$LOCAL_ROOT" && npm ci --no-audit --no-fund --loglevel=error)
}

# The internal API's secret of a local start: INTERNAL_API_SECRET when set, else the one kept in
# DATA_DIR/.internal-api-secret when that file is there (docs/guide.md makes it, mode 0600, so that a
# second shell reads the same: export S=$(cat data/.internal-api-secret)). Without either the
# internal API stays off and answers 404, as its contract says: a start never turns it on by itself.
local_internal_secret() {
	[ -n "${INTERNAL_API_SECRET:-}" ] && return 0
	local file="${DATA_DIR:-./data}/.internal-api-secret"
	[ -s "$file" ] || return 0
	INTERNAL_API_SECRET="$(cat "$file")"
	export INTERNAL_API_SECRET
}

local_main() {
	set -euo pipefail
	local mode="${1:-}"
	shift || true
	cd "$LOCAL_ROOT"
	ensure_node
	ensure_deps
	case "$mode" in
	start)
		local_internal_secret
		say "Building (tsc; about a minute the first time)…"
		npm run build --silent
		SERVICEDIR="${SERVICEDIR:-dist/services}" exec node node_modules/moleculer/bin/moleculer-runner.js --config dist/moleculer.config.js "$@"
		;;
	cluster)
		local_internal_secret
		# Checks NATS and Redis first, then builds (tsx runs the launcher from its source).
		exec node node_modules/tsx/dist/cli.mjs scripts/start-cluster.ts "$@"
		;;
	test)
		bash .ci/peers
		exec node node_modules/jest/bin/jest.js "$@"
		;;
	tool)
		local file="$1"
		shift
		npm run build:tools --silent
		exec node "dist/$file.js" "$@"
		;;
	run) exec "$@" ;;
	*)
		say "usage: bash scripts/local.sh start|cluster|test|tool FILE|run COMMAND…"
		exit 2
		;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then local_main "$@"; fi
