#!/usr/bin/env bash
# Runs the standard benchmark suite against both stores, the embedded one and a throwaway
# PostgreSQL, and writes bench/results/latest.md (with the run before side by side),
# bench/results/latest.jsonl (the raw results, the "previous" of the next run) and the
# table in the README's Performance section.
#
#   scripts/bench.sh            # what make bench runs
#   N=100000 DURATION=20s scripts/bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

N=${N:-10000}
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-32}
SCENARIOS=${SCENARIOS:-put,get,list,patch-heartbeat,search,search-text,jsonpath-title,jsonpath-type-vendor}
results_dir=bench/results
bin=bin/lmosdir

make --no-print-directory build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/results.jsonl"

# bench_store LABEL [env...]: starts lmosdir with the given environment on a port the
# kernel picks (read back from its start log), waits until it is ready, runs the suite
# against it and stops it.
bench_store() {
	local label=$1 port="" pid
	shift
	env "$@" LMOSDIR_LISTEN=127.0.0.1:0 LMOSDIR_LOG_FORMAT=text "$bin" serve 2>"$work/$label.log" &
	pid=$!
	for _ in $(seq 200); do
		port=$(sed -n 's/.*listen=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/$label.log" | head -n1)
		[[ -n $port ]] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	if [[ -z $port ]]; then
		echo "bench: lmosdir ($label) did not start:" >&2
		cat "$work/$label.log" >&2
		return 1
	fi
	echo "bench: $label on 127.0.0.1:$port (pid $pid), N=$N, $CONCURRENCY clients, $DURATION per scenario" >&2
	"$bin" bench --target "http://127.0.0.1:$port" --server-pid "$pid" --label "$label" --n "$N" \
		--concurrency "$CONCURRENCY" --duration "$DURATION" --scenario "$SCENARIOS" --json >>"$work/results.jsonl"
	kill -TERM "$pid"
	wait "$pid" || true
}

bench_store embedded LMOSDIR_DATA_DIR="$work/data"
export -f bench_store
export bin work N DURATION CONCURRENCY SCENARIOS
scripts/with-postgres.sh bash -c 'bench_store postgres LMOSDIR_DATABASE_URL="$LMOSDIR_TEST_DATABASE_URL"'

{
	echo "# lmosdir benchmark results"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- lmosdir: $("$bin" version | cut -d' ' -f2)"
	echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/ {print $2}') GiB, $(go env GOOS)/$(go env GOARCH), $(go version | cut -d' ' -f3)"
	echo "- load: lmosdir bench on the same machine, $CONCURRENCY clients, $DURATION per scenario, N=$N generated TDs (1–16 KB)"
	echo "- PostgreSQL: a throwaway local cluster (scripts/with-postgres.sh: fsync off)"
	echo "- reproduce: make bench (or N=… DURATION=… scripts/bench.sh)"
	echo
	"$bin" bench report --results "$work/results.jsonl" --previous "$results_dir/latest.jsonl"
} >"$work/latest.md"
mkdir -p "$results_dir"
cp "$work/results.jsonl" "$results_dir/latest.jsonl"
cp "$work/latest.md" "$results_dir/latest.md"
# The README shows the latest table between its bench markers.
awk -v table="$work/latest.md" '
	/<!-- bench:begin -->/ { print; while ((getline line < table) > 0) if (line !~ /^# /) print line; skip = 1; next }
	/<!-- bench:end -->/ { skip = 0 }
	!skip
' README.md >"$work/README.md"
cp "$work/README.md" README.md
cat "$results_dir/latest.md"
