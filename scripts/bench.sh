#!/usr/bin/env bash
# Benchmarks zero: builds the release binary (and the static one when the musl toolchain is
# there), starts the test suite's loopback mock provider, and prints one table of medians,
# also saved as target/bench.json. No arguments needed; ZERO_BENCH_RUNS sets the repetitions.
# `scripts/bench.sh schema` runs only the schema 1 / schema 2 section (ZERO_BENCH_BASELINE=<an
# older zero binary> adds its schema-1 figures, measured in the same turns); `scripts/bench.sh
# house` compares start, first text, CPU per delta and a 10 MB bash call with that binary;
# `scripts/bench.sh cost` prints the billed input of a 20-call Anthropic conversation with and
# without prompt caching; `scripts/bench.sh mcp` what one stdio MCP server adds to a run's
# start and to each call; `scripts/bench.sh sandbox` what bash's sandbox adds to each call;
# `scripts/bench.sh acp` an editor's turn over `zero acp` beside exec's first text, and the
# memory of an idle session.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked --quiet
if rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl && command -v musl-gcc >/dev/null; then
  CC_x86_64_unknown_linux_musl=musl-gcc cargo build --release --locked --quiet --target x86_64-unknown-linux-musl
fi

# The mock provider is a test of the e2e suite that serves until killed.
tests=$(cargo test --release --locked --test e2e --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -n 1)
mock_dir=$(mktemp -d)
ZERO_BENCH_MOCK="$mock_dir" "$tests" bench_mock::bench_mock_server --exact --nocapture >/dev/null 2>&1 &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null; rm -rf "$mock_dir"' EXIT
for _ in $(seq 1 200); do [ -s "$mock_dir/port" ] && break; sleep 0.05; done
[ -s "$mock_dir/port" ] || { echo "the mock provider did not start" >&2; exit 1; }

ZERO_BENCH_MOCK="$mock_dir" ZERO_BENCH_TESTS="$tests" python3 scripts/bench.py "$@"
