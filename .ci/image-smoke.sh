#!/usr/bin/env bash
# image-smoke.sh builds Switchyard's container image (deploy/Containerfile, `make image`)
# and runs two containers of it with podman against the machine's PostgreSQL and
# Redis, the way two instances behind a load balancer run. It checks:
#
#   1. the image: OCI labels (source, version, revision), no HEALTHCHECK, a numeric
#      non-root user, a static binary with fallback root certificates, and the
#      dashboard inside;
#   2. both containers start together on one new database (migrations and the
#      first boot serialise: exactly one logs the first-boot SDK key) and answer
#      /health; the dashboard is served from PUBLIC_DIR;
#   3. a flag written through the API of one reaches a /stream connection on the
#      other (through Redis);
#   4. each container's process runs as uid/gid 65532, with no capabilities and a
#      read-only root file system;
#   5. SIGTERM stops each container within the drain time: exit code 0 and the
#      log's "stopped", while a stream is still open.
#
# Container storage, the containers.conf and logs live in a temporary folder; a
# trap removes the containers and image (by id), the scratch database and that
# folder, even on failure. Every step is bounded by a timeout.
#
# Needs: root (or sudo) for apt-get and podman; PostgreSQL and Redis on loopback
# (make services). Usage: bash .ci/image-smoke.sh   (or make image-smoke)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_PREFIX=image-smoke
# shellcheck source=.ci/deploy-lib.sh
source .ci/deploy-lib.sh

PORT_A="${SMOKE_PORT_A:-39181}"
PORT_B="${SMOKE_PORT_B:-39182}"
# The server's shutdown drain (docs/reference/server.md, Shutdown): podman stop
# sends SIGTERM, waits this long, then SIGKILLs (exit code 137).
DRAIN_SECONDS=10
# runc: Debian's crun refuses this machine's hybrid cgroup layout.
OCI_RUNTIME="${SMOKE_OCI_RUNTIME:-runc}"
PG_ADMIN=(psql -X -q -w -v ON_ERROR_STOP=1 -h 127.0.0.1 -p 5432 -U postgres -d postgres)
REDIS_URL="redis://127.0.0.1:6379/0"

if ! have go; then export PATH="$PATH:/usr/local/go/bin"; fi
ensure_commands buildah podman "$OCI_RUNTIME" -- buildah podman "$OCI_RUNTIME"
ensure_commands curl -- curl
have psql || die "psql not found: run 'make services' first"
timeout 5 "${PG_ADMIN[@]}" -Atc 'select 1' >/dev/null 2>&1 ||
	die "PostgreSQL does not answer on 127.0.0.1:5432 as postgres: run 'make services' first"
for port in "$PORT_A" "$PORT_B"; do
	if timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
		die "port $port is taken (set SMOKE_PORT_A / SMOKE_PORT_B)"
	fi
done

started=$(date +%s)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-smoke.XXXXXX")"
DB="switchyard_smoke_$$_$RANDOM"
IMAGE_REF="localhost/switchyard-smoke:$$"
CONTAINERS=()
STREAM_PID=""

# Container storage and engine settings of this run only. The sandbox refuses to
# raise hard limits, so the default ulimits are set to what it grants.
cat >"$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "$OCI_RUNTIME"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$WORK/libpod-tmp"
EOF
cat >"$WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/storage"
runroot = "$WORK/run"
EOF
export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"

pm() { timeout 120 podman "$@" </dev/null; }

cleanup() {
	local rc=$?
	set +e
	[[ -n $STREAM_PID ]] && kill "$STREAM_PID" 2>/dev/null
	for id in "${CONTAINERS[@]}"; do
		pm rm -f -t 0 "$id" >/dev/null 2>&1
	done
	pm rmi -f "$IMAGE_REF" >/dev/null 2>&1
	timeout 60 buildah rm --all >/dev/null 2>&1
	# Anything still mounted under the work folder (overlay layers) goes first.
	findmnt -rn -o TARGET | grep -F "$WORK/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$WORK"
	timeout 30 "${PG_ADMIN[@]}" -c "drop database if exists $DB with (force)" >/dev/null 2>&1
	if [[ $rc -ne 0 ]]; then say "FAILED after $(($(date +%s) - started)) s"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	say "FAIL: $*"
	for id in "${CONTAINERS[@]}"; do
		echo "---- logs of container ${id:0:12} (last 40 lines)"
		pm logs --tail 40 "$id" 2>&1
	done
	[[ -f $WORK/stream.txt ]] && { echo "---- stream"; tail -n 20 "$WORK/stream.txt"; }
	exit 1
}
pass() { say "ok: $*"; }

# ------------------------------------------------------------------ the image

say "building the image (make image)"
make image IMAGE="${IMAGE_REF%:*}" IMAGE_TAG="${IMAGE_REF##*:}" IMAGE_EXTRA_TAGS= </dev/null

inspect_image() { pm image inspect -f "$1" "$IMAGE_REF"; }
revision=$(git rev-parse HEAD)
[[ $(inspect_image '{{index .Labels "org.opencontainers.image.revision"}}') == "$revision" ]] ||
	fail "label org.opencontainers.image.revision is not $revision"
[[ -n $(inspect_image '{{index .Labels "org.opencontainers.image.version"}}') ]] ||
	fail "label org.opencontainers.image.version is empty"
[[ $(inspect_image '{{index .Labels "org.opencontainers.image.source"}}') == https://* ]] ||
	fail "label org.opencontainers.image.source is not a URL"
[[ $(inspect_image '{{.Config.User}}') == 65532:65532 ]] || fail "image user is not 65532:65532"
[[ $(inspect_image '{{.HealthCheck}}') == "<nil>" ]] || fail "image has a HEALTHCHECK"
pass "labels (version $(inspect_image '{{index .Labels "org.opencontainers.image.version"}}'), revision, source), user 65532:65532, no HEALTHCHECK"

mnt=$(pm image mount "$IMAGE_REF")
[[ -s $mnt/usr/share/switchyard/public/index.html ]] || fail "no dashboard in the image"
file_info=$(go version -m "$mnt/usr/local/bin/switchyard")
grep -q $'build\tCGO_ENABLED=0' <<<"$file_info" || fail "the binary was not built with CGO_ENABLED=0"
grep -q $'dep\tgolang.org/x/crypto/x509roots/fallback' <<<"$file_info" || fail "the binary has no fallback root certificates"
pm image unmount "$IMAGE_REF" >/dev/null
pass "static binary with fallback roots and dashboard inside; $(inspect_image '{{.Size}}') bytes"

# ------------------------------------------------------------------ two instances

say "scratch database $DB"
timeout 30 "${PG_ADMIN[@]}" -c "create database $DB owner switchyard"

secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
run_instance() { # name port [extra podman flags...]
	local name=$1 port=$2
	shift 2
	cat >"$WORK/$name.env" <<EOF
HOST=127.0.0.1
PORT=$port
PUBLIC_URL=http://127.0.0.1:$port
DATABASE_URL=postgres://switchyard:switchyard@127.0.0.1:5432/$DB?sslmode=disable
REDIS_URL=$REDIS_URL
REDIS_CHANNEL=switchyard-smoke:$DB
SESSION_SECRET=$secret
COOKIE_SECURE=true
EOF
	pm run -d --name "switchyard-smoke-$name-$$" --network host --env-file "$WORK/$name.env" \
		--read-only --cap-drop all --security-opt no-new-privileges "$@" "$IMAGE_REF"
}

# Started together: migrations run under a session lock and the first boot under
# an advisory lock, so the two serialise.
CONTAINERS+=("$(run_instance a "$PORT_A")")
CONTAINERS+=("$(run_instance b "$PORT_B")")
A=${CONTAINERS[0]} B=${CONTAINERS[1]}

wait_healthy() { # container port
	local i
	for ((i = 0; i < 120; i++)); do
		if [[ $(curl -s -m 2 "http://127.0.0.1:$2/health" 2>/dev/null) == OK ]]; then return 0; fi
		[[ $(pm inspect -f '{{.State.Running}}' "$1") == true ]] || fail "container ${1:0:12} exited before answering /health"
		sleep 0.5
	done
	fail "container ${1:0:12} did not answer /health on port $2 within 60 s"
}
wait_healthy "$A" "$PORT_A"
wait_healthy "$B" "$PORT_B"
pass "both containers answer /health with OK (ports $PORT_A and $PORT_B)"

curl -fsS -m 5 "http://127.0.0.1:$PORT_B/" | grep -qi '<html' || fail "GET / on B does not serve the dashboard"
pass "the dashboard is served from PUBLIC_DIR"

first_boot=$( (pm logs "$A"; pm logs "$B") 2>/dev/null | grep '"first boot: created the Production SDK key' || true)
[[ $(grep -c . <<<"$first_boot") -eq 1 ]] || fail "want exactly one first-boot SDK key log line, got: $first_boot"
sdk_key=$(sed -E 's/.*"sdk_key":"([^"]+)".*/\1/' <<<"$first_boot")
env_id=$(sed -E 's/.*"env_id":"([^"]+)".*/\1/' <<<"$first_boot")
[[ $sdk_key == sk_live_* && -n $env_id ]] || fail "could not read the SDK key and environment from: $first_boot"
pass "exactly one instance logged the first-boot SDK key"

# ------------------------------------------------------------------ write on A, stream on B

curl -sN -m 60 -H "Authorization: Bearer $sdk_key" "http://127.0.0.1:$PORT_B/stream" >"$WORK/stream.txt" 2>/dev/null &
STREAM_PID=$!
for ((i = 0; i < 40; i++)); do
	grep -q '^event: ready' "$WORK/stream.txt" && break
	sleep 0.25
done
grep -q '^event: ready' "$WORK/stream.txt" || fail "the stream on B sent no ready event within 10 s"

flag_key="smoke-$RANDOM"
code=$(curl -sS -m 10 -o "$WORK/put.json" -w '%{http_code}' -X POST \
	-H "Authorization: Bearer $sdk_key" -H 'Content-Type: application/json' \
	-d "{\"key\":\"$flag_key\",\"is_enabled\":true,\"description\":\"image smoke test\"}" \
	"http://127.0.0.1:$PORT_A/api/environments/$env_id/flags")
[[ $code == 200 ]] || fail "POST flag on A answered $code: $(cat "$WORK/put.json")"
written=$(date +%s%N)
for ((i = 0; i < 100; i++)); do
	# After the bootstrap's ready event: a live update, not part of the replay.
	if sed -n '/^event: ready/,$p' "$WORK/stream.txt" | grep -q "\"key\":\"$flag_key\""; then break; fi
	sleep 0.1
done
sed -n '/^event: ready/,$p' "$WORK/stream.txt" | grep -q "\"key\":\"$flag_key\"" ||
	fail "the flag written on A did not reach the stream on B within 10 s"
pass "flag $flag_key written on A reached the stream on B in about $((($(date +%s%N) - written) / 1000000)) ms"

# ------------------------------------------------------------------ non-root

for id in "$A" "$B"; do
	pid=$(pm inspect -f '{{.State.Pid}}' "$id")
	[[ $(pm inspect -f '{{.Config.User}}' "$id") == 65532:65532 ]] || fail "container ${id:0:12} user is not 65532:65532"
	uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$pid/status")
	gids=$(awk '/^Gid:/ {print $2, $3, $4, $5}' "/proc/$pid/status")
	caps=$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")
	[[ $uids == "65532 65532 65532 65532" && $gids == "65532 65532 65532 65532" ]] ||
		fail "process $pid of ${id:0:12} runs as uid $uids, gid $gids"
	[[ $caps =~ ^0+$ ]] || fail "process $pid of ${id:0:12} has capabilities $caps"
done
pass "both processes run as uid and gid 65532 with no capabilities, on a read-only root file system"

# ------------------------------------------------------------------ SIGTERM

stop_clean() { # container, while describing
	local id=$1 t0 ms code
	t0=$(date +%s%N)
	pm stop -t "$DRAIN_SECONDS" "$id" >/dev/null
	ms=$((($(date +%s%N) - t0) / 1000000))
	code=$(pm inspect -f '{{.State.ExitCode}}' "$id")
	[[ $code == 0 ]] || fail "container ${id:0:12} exited with $code after SIGTERM (137: killed after the ${DRAIN_SECONDS} s drain)"
	pm logs "$id" 2>&1 | tail -n 5 | grep -q '"msg":"stopped"' || fail "container ${id:0:12} did not log \"stopped\""
	pass "SIGTERM stopped ${id:0:12}${2:+ $2} in $ms ms (drain ${DRAIN_SECONDS} s): exit code 0, logged \"stopped\""
}
stop_clean "$B" "(serving an open stream)"
# The stream ends with its server rather than running out its curl timeout.
for ((i = 0; i < 20; i++)); do kill -0 "$STREAM_PID" 2>/dev/null || break; sleep 0.25; done
kill -0 "$STREAM_PID" 2>/dev/null && fail "the stream on B stayed open after B stopped"
STREAM_PID=""
stop_clean "$A" ""

say "all checks passed in $(($(date +%s) - started)) s"
