#!/usr/bin/env bash
# Builds OpenTofu from source through the Go module proxy (its go.mod has a
# replace, so go install cannot), for the Terraform provider's acceptance
# tests: build-tofu.sh VERSION OUTPUT.
set -euo pipefail
version="$1" out="$2"
dir="$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@${version}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -n "$dir" ]] || { echo "build-tofu: could not download opentofu ${version}" >&2; exit 1; }
src="$(mktemp -d)"
trap 'chmod -R u+w "$src"; rm -rf "$src"' EXIT
cp -R "$dir"/. "$src"
chmod -R u+w "$src"
mkdir -p "$(dirname "$out")"
(cd "$src" && go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$OLDPWD/$out.tmp" ./cmd/tofu)
mv "$out.tmp" "$out"
"$out" version
