#!/usr/bin/env bash
# The Python clients the client tests run (docs/clients.md): one virtual environment per
# python-gitlab release (1.4.0 and the current one cannot share one), under PYTHON_CLIENTS_DIR
# (default ~/.cache/gitlab-v3-ci/python-clients). An environment whose pinned requirements
# are unchanged is reused; otherwise it is made again from the requirements file. `--check` makes
# nothing and fails when one is missing or outdated (.ci/peers runs both).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${PYTHON_CLIENTS_DIR:-${GITLAB_V3_CI_CACHE:-$HOME/.cache/gitlab-v3-ci}/python-clients}"
python="${PYTHON:-python3}"
for requirements in "$here"/requirements-*.txt; do
	name="python-gitlab-$(basename "$requirements" .txt | sed 's/^requirements-//')"
	venv="$dir/$name"
	if cmp -s "$requirements" "$venv/requirements.txt"; then
		[ "${1:-}" = --check ] || echo "$name: up to date in $venv"
		continue
	fi
	[ "${1:-}" = --check ] && { echo "$name is not installed as pinned in $venv" >&2; exit 1; }
	echo "$name: installing into $venv"
	rm -rf "$venv"
	"$python" -m venv "$venv"
	# setuptools first (when pinned), so that a source-only release builds with the pinned one.
	if setuptools=$(grep -E '^setuptools==' "$requirements"); then
		"$venv/bin/pip" install -q --disable-pip-version-check "$setuptools"
	fi
	"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -r "$requirements"
	# --no-deps installs exactly the pins; pip check fails if one is missing or wrong.
	"$venv/bin/pip" check --disable-pip-version-check
	cp "$requirements" "$venv/requirements.txt"
done
