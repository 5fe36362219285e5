#!/usr/bin/env bash
# pip install into a venv, done by uv where uv can be had (a fresh app venv here: 24 s against pip's 110 s,
# docs/space.md, "Installing"), else by pip: `tools/install.sh .venv/bin/python -c constraints.txt -e .`
# uv reads no pip configuration, so pip's own find-links and indexes are passed on and both take the same wheels
# (on these machines torch 2.13.0's CPU build lies in a find-links folder; without it uv would fetch a CUDA build).
set -euo pipefail
py="$1"; shift
uv="$(dirname "$py")/uv"
if [ -x "$uv" ] || "$py" -m pip install -q uv >/dev/null 2>&1; then
  args=()
  for link in $("$py" -m pip config get global.find-links 2>/dev/null) ${PIP_FIND_LINKS:-}; do
    args+=(--find-links "$link")
  done
  for index in $("$py" -m pip config get global.extra-index-url 2>/dev/null) ${PIP_EXTRA_INDEX_URL:-}; do
    args+=(--extra-index-url "$index")
  done
  index="$("$py" -m pip config get global.index-url 2>/dev/null || true)"
  if [ -n "$index" ]; then args+=(--index-url "$index"); fi
  # pip's order: every index may offer a version, the best match wins (uv's default stops at the first index);
  # no bytecode compiled here: Python writes it for the modules a process imports (the Makefile lets it)
  exec "$uv" pip install -q --python "$py" --index-strategy unsafe-best-match "${args[@]}" "$@"
fi
"$py" -m pip install -q --upgrade pip
exec "$py" -m pip install -q "$@"
