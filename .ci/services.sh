#!/usr/bin/env bash
# services.sh makes the services Switchyard's tests need available on loopback:
#
#   PostgreSQL  127.0.0.1:5432  trust auth for the postgres role on loopback,
#                               plus role and database "switchyard" (password "switchyard")
#   Redis       127.0.0.1:6379  nothing kept on disk
#   node/npx                    for the API linter and the dashboard (Node.js >= 20.19)
#   /usr/bin/chromium           Debian's Chromium, driven headless by the dashboard's
#                               end-to-end tests (playwright-core)
#
# It is idempotent: a service that already answers is left alone. Missing packages
# are installed with apt-get; services are started without systemd (CI machines and
# containers have none). It never reads stdin and needs no TTY.
#
# Usage: bash .ci/services.sh
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
WAIT_SECONDS="${SERVICES_WAIT_SECONDS:-30}"
HBA_MARKER="# switchyard: loopback trust for tests (.ci/services.sh)"

say() { printf 'services: %s\n' "$*"; }
die() { printf 'services: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# as_root runs a command as root: directly when we are root, else through sudo.
as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif have sudo; then
		sudo -n "$@"
	else
		die "need root to run '$*' (not root and no sudo)"
	fi
}

# as_postgres runs a command as the postgres OS user (peer auth on the local socket).
as_postgres() {
	if [[ $(id -un) == postgres ]]; then
		"$@"
	elif [[ $(id -u) -eq 0 ]]; then
		if have runuser; then runuser -u postgres -- "$@"; else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
	elif have sudo; then
		sudo -n -u postgres "$@"
	else
		die "need root or sudo to run '$*' as the postgres user"
	fi
}

APT_UPDATED=0
apt_install() {
	have apt-get || die "apt-get not found; install $* by hand"
	if [[ $APT_UPDATED -eq 0 ]]; then
		say "apt-get update"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >/dev/null
		APT_UPDATED=1
	fi
	say "apt-get install $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" </dev/null >/dev/null
}

# tcp_open succeeds when something accepts connections on host:port.
tcp_open() {
	timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

pg_answers() {
	if have pg_isready; then
		pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2 </dev/null
	else
		tcp_open "$PG_HOST" "$PG_PORT"
	fi
}

redis_answers() {
	if have redis-cli; then
		[[ $(timeout 3 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null </dev/null) == PONG ]]
	else
		timeout 3 bash -c "exec 3<>/dev/tcp/$REDIS_HOST/$REDIS_PORT && printf 'PING\r\n' >&3 && read -r line <&3 && [[ \$line == +PONG* ]]" 2>/dev/null
	fi
}

# wait_for polls a check function until it succeeds or WAIT_SECONDS pass.
wait_for() {
	local name=$1 check=$2 i
	for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
		if "$check"; then
			say "$name is up"
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# ---------------------------------------------------------------- PostgreSQL

pg_psql() {
	# Connects as the postgres role over TCP; relies on loopback trust.
	PGCONNECT_TIMEOUT=5 psql -X -q -w -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres "$@" </dev/null
}

start_postgres() {
	if ! have pg_ctlcluster || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		apt_install postgresql
		# The package may have started its cluster already.
		if pg_answers; then return 0; fi
	fi
	local version
	# Prefer an existing cluster named main (newest version), else create one.
	version=$(pg_lsclusters --no-header 2>/dev/null | awk '$2 == "main" {print $1}' | sort -V | tail -n 1)
	if [[ -z $version ]]; then
		version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
		[[ -n $version ]] || die "no PostgreSQL server version found under /usr/lib/postgresql"
		say "creating PostgreSQL $version cluster main on port $PG_PORT"
		as_root pg_createcluster --port "$PG_PORT" "$version" main >/dev/null
	fi
	local port
	port=$(pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')
	[[ $port == "$PG_PORT" ]] || say "warning: cluster $version/main is configured for port $port, not $PG_PORT"
	if pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' | grep -q online; then
		say "PostgreSQL $version/main reports online but does not answer on $PG_HOST:$PG_PORT; restarting"
		as_root pg_ctlcluster --skip-systemctl-redirect "$version" main restart
	else
		say "starting PostgreSQL $version/main"
		as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
	fi
}

# ensure_pg_trust makes the postgres role usable without a password on loopback,
# as TEST_DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres) expects.
ensure_pg_trust() {
	if pg_psql -Atc 'select 1' >/dev/null 2>&1; then
		return 0
	fi
	say "postgres role cannot log in on $PG_HOST without a password; adding loopback trust to pg_hba.conf"
	local hba
	hba=$(as_postgres psql -X -Atqc 'show hba_file' </dev/null) ||
		die "cannot reach PostgreSQL as the postgres OS user to read hba_file"
	if ! as_root grep -qF "$HBA_MARKER" "$hba"; then
		local tmp
		tmp=$(mktemp)
		{
			echo "$HBA_MARKER"
			echo "host    all    all    127.0.0.1/32    trust"
			echo "host    all    all    ::1/128         trust"
			as_root cat "$hba"
		} >"$tmp"
		as_root cp "$tmp" "$hba"
		rm -f "$tmp"
	fi
	as_postgres psql -X -Atqc 'select pg_reload_conf()' </dev/null >/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if pg_psql -Atc 'select 1' >/dev/null 2>&1; then return 0; fi
		sleep 0.5
	done
	die "postgres role still cannot log in on $PG_HOST:$PG_PORT after editing $hba"
}

ensure_switchyard_db() {
	if [[ $(pg_psql -Atc "select 1 from pg_roles where rolname = 'switchyard'") != 1 ]]; then
		say "creating role switchyard"
		pg_psql -c "create role switchyard login password 'switchyard' createdb"
	fi
	if [[ $(pg_psql -Atc "select 1 from pg_database where datname = 'switchyard'") != 1 ]]; then
		say "creating database switchyard"
		pg_psql -c "create database switchyard owner switchyard"
	fi
}

ensure_postgres() {
	if pg_answers; then
		say "PostgreSQL already answers on $PG_HOST:$PG_PORT"
	else
		start_postgres
		wait_for "PostgreSQL" pg_answers ||
			die "PostgreSQL did not answer on $PG_HOST:$PG_PORT within ${WAIT_SECONDS}s (see /var/log/postgresql/)"
	fi
	have psql || apt_install postgresql-client
	ensure_pg_trust
	ensure_switchyard_db
}

# ---------------------------------------------------------------- Redis

start_redis() {
	if ! have redis-server; then
		apt_install redis-server
		# The package may have started a server already.
		if redis_answers; then return 0; fi
	fi
	local dir=/var/lib/redis logdir=/var/log/redis
	if ! [[ -d $dir && -w $dir ]]; then
		dir="${TMPDIR:-/tmp}/switchyard-redis"
		mkdir -p "$dir"
	fi
	[[ -d $logdir && -w $logdir ]] || logdir=$dir
	say "starting Redis (dir $dir, log $logdir/ci.log)"
	redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" \
		--save "" --appendonly no --dir "$dir" --logfile "$logdir/ci.log" </dev/null >/dev/null
}

ensure_redis() {
	if redis_answers; then
		say "Redis already answers on $REDIS_HOST:$REDIS_PORT"
		return 0
	fi
	start_redis
	wait_for "Redis" redis_answers ||
		die "Redis did not answer on $REDIS_HOST:$REDIS_PORT within ${WAIT_SECONDS}s"
}

# ---------------------------------------------------------------- Node.js

ensure_node() {
	if ! (have npx && have node); then
		apt_install nodejs npm
		have npx || die "npx still missing after installing nodejs and npm"
	fi
	# Vite 8 needs Node.js 20.19 or newer.
	node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
		die "node $(node --version) is too old for the dashboard build: Node.js >= 20.19 is needed"
	say "node $(node --version) and npx present"
}

# ---------------------------------------------------------------- Chromium

ensure_chromium() {
	if [[ -x /usr/bin/chromium ]]; then
		say "chromium present"
		return 0
	fi
	apt_install chromium
	[[ -x /usr/bin/chromium ]] || die "/usr/bin/chromium still missing after installing chromium"
}

ensure_postgres
ensure_redis
ensure_node
ensure_chromium
say "ready"
