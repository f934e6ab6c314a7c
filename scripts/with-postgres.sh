#!/usr/bin/env bash
# Runs a command with LMOSDIR_TEST_DATABASE_URL pointing at a PostgreSQL server.
#
#   scripts/with-postgres.sh go test ./...
#
# An existing LMOSDIR_TEST_DATABASE_URL is used as it is. Otherwise a throwaway
# cluster is created in a temporary directory, lives exactly as long as the
# command, and is deleted afterwards. When no PostgreSQL server is installed and
# we are root on Debian, the distribution's package is installed first, because
# CI machines start fresh and must fail, not skip, without a database.
set -euo pipefail

prog=with-postgres

if [[ $# -eq 0 ]]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi

if [[ -n ${LMOSDIR_TEST_DATABASE_URL:-} ]]; then
	exec "$@"
fi

# find_bindir prints the first directory holding a usable PostgreSQL server.
# pg_config may belong to libpq-dev alone, so each candidate is checked for the
# server binaries rather than trusted.
find_bindir() {
	local candidates=() dir
	if command -v pg_config >/dev/null 2>&1; then
		candidates+=("$(pg_config --bindir 2>/dev/null || true)")
	fi
	# Newest major version first: sort -V orders 9.6 before 10.
	while IFS= read -r dir; do
		candidates+=("$dir")
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV)
	if command -v initdb >/dev/null 2>&1; then
		candidates+=("$(dirname "$(command -v initdb)")")
	fi
	for dir in "${candidates[@]}"; do
		if [[ -n $dir && -x $dir/initdb && -x $dir/pg_ctl && -x $dir/postgres && -x $dir/pg_isready ]]; then
			printf '%s\n' "$dir"
			return 0
		fi
	done
	return 1
}

install_postgres() {
	echo "$prog: no PostgreSQL server found; installing Debian's postgresql package" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
	# The package creates and may start a "main" cluster on port 5432. Nothing
	# here uses it, and a server left behind would outlive this run.
	if command -v pg_lsclusters >/dev/null 2>&1; then
		local ver name _ status
		while read -r ver name _ status _; do
			if [[ $status == online* ]]; then
				pg_ctlcluster "$ver" "$name" stop >&2 || true
			fi
		done < <(pg_lsclusters --no-header 2>/dev/null || true)
	fi
}

installed=""
if ! bindir=$(find_bindir); then
	if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
		install_postgres
		installed=" (just installed)"
		bindir=$(find_bindir) || {
			echo "$prog: installed postgresql but still found no initdb/pg_ctl/postgres" >&2
			exit 1
		}
	else
		echo "$prog: no PostgreSQL server binaries (initdb, pg_ctl, postgres, pg_isready) in" \
			"'pg_config --bindir', /usr/lib/postgresql/*/bin or PATH." \
			"Install them (Debian: apt-get install postgresql) or set LMOSDIR_TEST_DATABASE_URL." >&2
		exit 1
	fi
fi

# initdb and postgres refuse to run as root, so root hands the cluster to an
# unprivileged account. nobody is enough when the postgres account is missing.
pg_user=""
if [[ $EUID -eq 0 ]]; then
	if id -u postgres >/dev/null 2>&1; then
		pg_user=postgres
	else
		pg_user=nobody
	fi
fi

as_pg() {
	if [[ -z $pg_user ]]; then
		"$@"
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u "$pg_user" -- "$@"
	else
		su -s /bin/bash "$pg_user" -c "$(printf '%q ' "$@")"
	fi
}

tmp=$(mktemp -d -t lmosdir-pg.XXXXXX)
data=$tmp/data
started=""
child=""

# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $started ]]; then
		# immediate: the data is about to be deleted, a checkpoint is wasted time.
		as_pg "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf -- "$tmp"
	exit "$rc"
}

# The command must not outlive the cluster it uses, so a signal waits for it.
# Ctrl-C reaches the whole foreground process group, the command included; it
# gets a moment to act on that before being sent INT once more, in case the
# INT was meant for this script alone. TERM is usually sent to one process.
# shellcheck disable=SC2317 # invoked by trap
on_signal() {
	local sig=$1 code=$2
	if [[ -n $child ]]; then
		if [[ $sig == INT ]]; then
			for _ in $(seq 1 30); do
				kill -0 "$child" 2>/dev/null || break
				sleep 0.1
			done
		fi
		kill -s "$sig" "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	exit "$code"
}

trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

if [[ -n $pg_user ]]; then
	chown "$pg_user" "$tmp"
	if ! as_pg test -w "$tmp"; then
		echo "$prog: user $pg_user cannot reach $tmp; set TMPDIR to a directory it can enter" >&2
		exit 1
	fi
fi

if ! as_pg "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync \
	>"$tmp/initdb.log" 2>&1; then
	echo "$prog: initdb failed:" >&2
	cat "$tmp/initdb.log" >&2
	exit 1
fi

cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$tmp'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
EOF

# port_in_use succeeds when something already accepts connections on the port.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Set before starting: a pg_ctl that times out may leave a server running.
started=1
port=""
for _ in $(seq 1 20); do
	candidate=$((20000 + RANDOM % 40000))
	if port_in_use "$candidate"; then
		continue
	fi
	if as_pg "$bindir/pg_ctl" -D "$data" -l "$tmp/server.log" -w -t 60 -o "-p $candidate" start >/dev/null 2>&1; then
		port=$candidate
		break
	fi
	# Another process may have taken the port between the check and the bind.
	if grep -q 'could not bind\|Address already in use' "$tmp/server.log" 2>/dev/null; then
		: >"$tmp/server.log"
		continue
	fi
	echo "$prog: PostgreSQL failed to start:" >&2
	cat "$tmp/server.log" >&2 || true
	exit 1
done
if [[ -z $port ]]; then
	echo "$prog: found no free TCP port for PostgreSQL" >&2
	exit 1
fi

ready=""
for _ in $(seq 1 100); do
	if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
		ready=1
		break
	fi
	sleep 0.1
done
if [[ -z $ready ]]; then
	echo "$prog: PostgreSQL on port $port did not become ready:" >&2
	cat "$tmp/server.log" >&2 || true
	exit 1
fi

version=$("$bindir/postgres" --version | awk '{print $3}')
echo "$prog: PostgreSQL $version$installed from $bindir on 127.0.0.1:$port (cluster in $tmp)" >&2

export LMOSDIR_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"

# Run in the background so a signal reaches the traps at once instead of after
# the command ends. Bash detaches the stdin of background commands and makes
# them ignore INT and QUIT; <&0 and the trap reset undo both.
(
	trap - INT QUIT
	exec "$@"
) <&0 &
child=$!
rc=0
wait "$child" || rc=$?
child=""
exit "$rc"
