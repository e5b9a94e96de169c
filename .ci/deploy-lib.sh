# shellcheck shell=bash
# deploy-lib.sh: helpers shared by the deployment checks (.ci/image-smoke.sh,
# .ci/deploy-check.sh). Source it: it defines functions and their defaults only.
#
# Packages come from Debian (apt-get, as .ci/services.sh installs its own) and Go
# tools from the Go module proxy at pinned versions (go install into TOOLS_DIR,
# one folder per version, so a rerun or a changed pin needs no clean-up).

# LOG_PREFIX names the calling script in messages.
: "${LOG_PREFIX:=deploy}"

say() { printf '%s: %s\n' "$LOG_PREFIX" "$*"; }
die() { printf '%s: error: %s\n' "$LOG_PREFIX" "$*" >&2; exit 1; }
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

APT_UPDATED=0
# apt_install installs Debian packages without their recommendations (docker-compose
# would otherwise bring the Docker engine, which nothing here runs).
apt_install() {
	have apt-get || die "apt-get not found; install $* by hand"
	if [[ $APT_UPDATED -eq 0 ]]; then
		say "apt-get update"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >/dev/null
		APT_UPDATED=1
	fi
	say "apt-get install $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" </dev/null >/dev/null
}

# ensure_commands installs the packages named after "--" unless every command
# before it is already on PATH: ensure_commands buildah podman -- buildah podman
ensure_commands() {
	local cmds=() missing=0
	while [[ $# -gt 0 && $1 != -- ]]; do cmds+=("$1"); shift; done
	shift
	for c in "${cmds[@]}"; do have "$c" || missing=1; done
	if [[ $missing -eq 1 ]]; then
		apt_install "$@"
		for c in "${cmds[@]}"; do have "$c" || die "$c still missing after installing $*"; done
	fi
}

# go_tool prints the path of a Go command installed at a pinned version, and
# installs it first when it is not there yet:
#   go_tool helm.sh/helm/v3/cmd/helm v3.22.0
go_tool() {
	local pkg=$1 version=$2 name dir
	name=${pkg##*/}
	dir="$TOOLS_DIR/$name-$version"
	if [[ ! -x $dir/$name ]]; then
		have go || die "go not found (needed to install $pkg@$version)"
		say "go install $pkg@$version (first run only: cached in $dir)" >&2
		mkdir -p "$dir"
		GOBIN="$(cd "$dir" && pwd)" GOFLAGS='' timeout 1200 go install "$pkg@$version" </dev/null >&2 ||
			{ rm -rf "$dir"; die "go install $pkg@$version failed"; }
	fi
	printf '%s\n' "$dir/$name"
}
