#!/usr/bin/env bash
# The zero action's step (action.yml beside it): downloads zero's static release for this
# machine, checks it against the release's SHA256SUMS, runs `zero exec -o stream-json
# --schema-version 2` on the inputs, keeps the events in a file, and writes the step's outputs
# and job summary. Exits with zero's exit code.
#
# Inputs come as ZERO_INPUT_* variables (see action.yml); GITHUB_OUTPUT, GITHUB_STEP_SUMMARY
# and RUNNER_TEMP as the runner sets them. Run locally, it needs ZERO_INPUT_VERSION and
# ZERO_INPUT_RELEASE_URL ("<url>/<tag>/zero-<version>-<target>.tar.gz" and
# "<url>/<tag>/SHA256SUMS" are fetched), and writes its outputs to GITHUB_OUTPUT when set.
set -euo pipefail

fail() {
  echo "::error title=zero action::$1" >&2
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
command -v jq >/dev/null || fail "jq is needed to read zero's events (apt-get install jq)"

# The release: the action's own tag and repository unless given. The runner leaves
# github.action_ref empty in some composite actions; the action's path then says it
# (.../_actions/<owner>/<repo>/<ref>/scripts/action).
from_path=${here#*/_actions/}
[ "$from_path" != "$here" ] || from_path=""
tag=${ZERO_INPUT_VERSION:-${ZERO_ACTION_REF:-$(echo "$from_path" | cut -d/ -f3)}}
[ -n "$tag" ] || fail "no release to download: set the version input (a release tag such as v0.1.0)"
repository=${ZERO_ACTION_REPOSITORY:-$(echo "$from_path" | cut -d/ -f1-2)}
release_url=${ZERO_INPUT_RELEASE_URL:-${ZERO_SERVER_URL:-https://github.com}/$repository/releases/download}
release_url=${release_url%/}

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/amd64) target=x86_64-unknown-linux-musl ;;
  Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
  *) fail "zero's releases are static Linux binaries; this runner is $(uname -s)/$(uname -m)" ;;
esac
tarball="zero-${tag#v}-$target.tar.gz"
install_dir="$temp/zero-action"
PREFIX="$install_dir" sh "$here/../install.sh" "$release_url/$tag/$tarball" "$release_url/$tag/SHA256SUMS" >&2 \
  || fail "could not install $release_url/$tag/$tarball (is there a release $tag for $target?)"
zero="$install_dir/bin/zero"

# The command line, from the inputs.
args=(exec -o stream-json --schema-version 2)
prompt=${ZERO_INPUT_PROMPT:-}
if [ -n "${ZERO_INPUT_PROMPT_FILE:-}" ]; then
  [ -z "$prompt" ] || fail "give prompt or prompt-file, not both"
  [ -f "$ZERO_INPUT_PROMPT_FILE" ] || fail "prompt-file $ZERO_INPUT_PROMPT_FILE is not a file"
  args+=(--file "$ZERO_INPUT_PROMPT_FILE")
elif [ -n "$prompt" ]; then
  args+=(--prompt "$prompt")
else
  fail "the prompt input (or prompt-file) is required"
fi
add() { # add FLAG VALUE: the flag when the input is set
  if [ -n "$2" ]; then args+=("$1" "$2"); fi
}
add -m "${ZERO_INPUT_MODEL:-}"
add --provider "${ZERO_INPUT_PROVIDER:-}"
add --auto "${ZERO_INPUT_AUTO:-}"
add --sandbox "${ZERO_INPUT_SANDBOX:-}"
add --output-schema "${ZERO_INPUT_OUTPUT_SCHEMA:-}"
add --max-turns "${ZERO_INPUT_MAX_TURNS:-}"
add --max-budget-usd "${ZERO_INPUT_MAX_BUDGET_USD:-}"
add --mcp-config "${ZERO_INPUT_MCP_CONFIG:-}"
if [ -n "${ZERO_INPUT_ARGS:-}" ]; then
  read -r -a extra <<<"$ZERO_INPUT_ARGS"
  args+=("${extra[@]}")
fi

# The run: events to a file (and the log), stderr to the log.
events="$temp/zero-events-$$.jsonl"
set +e
"$zero" "${args[@]}" </dev/null | tee "$events"
code=${PIPESTATUS[0]}
set -e

# What the run said: the last of each event that holds an output.
last() { # last TYPE FILTER
  jq -c -r --arg type "$1" "select(.type == \$type) | $2" "$events" 2>/dev/null | tail -n 1
}
final=$(jq -r -s '[.[] | select(.type == "final")] | last | .text // empty' "$events" 2>/dev/null || true)
structured=$(last final '.structured // empty')
session=$(last run_start '.sessionId // empty')
cost=$(last usage '.cumulative.costUsd // empty')
error=$(jq -r -s '[.[] | select(.type == "error")] | last | .message // empty' "$events" 2>/dev/null || true)

output() { # output NAME VALUE, in the runner's multi-line form
  [ -n "${GITHUB_OUTPUT:-}" ] || return 0
  local mark="zero_$RANDOM$RANDOM"
  printf '%s<<%s\n%s\n%s\n' "$1" "$mark" "$2" "$mark" >>"$GITHUB_OUTPUT"
}
output final "$final"
output structured "$structured"
output exit-code "$code"
output session-id "$session"
output cost-usd "$cost"
output events-file "$events"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### zero"
    echo
    if [ "$code" -eq 0 ]; then echo "$final"; else echo "**Failed (exit $code):** $error"; fi
    echo
    tools=$(jq -r 'select(.type == "tool_result") | "| `\(.name)` | \(.status) |"' "$events" 2>/dev/null || true)
    if [ -n "$tools" ]; then
      echo "| Tool | Result |"
      echo "| --- | --- |"
      echo "$tools"
      echo
    fi
    if [ -n "$cost" ]; then echo "Cost: \$$cost"; fi
    if [ -n "$session" ]; then echo "Session: \`$session\`"; fi
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$code"
