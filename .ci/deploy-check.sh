#!/usr/bin/env bash
# deploy-check.sh validates the deployment files offline:
#
#   deploy/compose.yaml     docker-compose config -q, with deploy/.env.example as its .env
#                           (Debian's docker-compose: the schema, unknown keys, variables)
#   deploy/helm/switchyard  helm lint --strict with each ci/*-values.yaml; helm template of each,
#                           validated strictly (unknown fields, types, required fields) by
#                           kubectl-validate against Kubernetes' built-in schemas and the
#                           vendored ServiceMonitor CRD (ci/crds/); and values the chart must
#                           refuse (missing secret, no Redis for two replicas, a misspelt key)
#
# helm and kubectl-validate come from the Go module proxy at the pinned versions below,
# installed once into bin/tools (git-ignored); docker-compose from apt when missing.
#
# Usage: bash .ci/deploy-check.sh   (or make deploy-check)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOG_PREFIX=deploy-check
# shellcheck source=.ci/deploy-lib.sh
source .ci/deploy-lib.sh

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
KUBECTL_VALIDATE_VERSION="${KUBECTL_VALIDATE_VERSION:-v0.0.4}"
# The Kubernetes version manifests are validated against: the newest whose schemas
# kubectl-validate v0.0.4 embeds. helm built by go install assumes 1.20 unless told.
KUBE_VERSION="${KUBE_VERSION:-1.30}"
TOOLS_DIR="${TOOLS_DIR:-$PWD/bin/tools}"
CHART=deploy/helm/switchyard

if ! have go; then export PATH="$PATH:/usr/local/go/bin"; fi
started=$(date +%s)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-deploy-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# ------------------------------------------------------------------ compose

ensure_commands docker-compose -- docker-compose
say "docker-compose config -q (deploy/compose.yaml, deploy/.env.example)"
timeout 60 docker-compose -f deploy/compose.yaml --env-file deploy/.env.example config -q </dev/null
# The secrets are required: without them the file must not resolve.
: >"$WORK/empty.env"
if out=$(env -u SESSION_SECRET -u POSTGRES_PASSWORD timeout 60 docker-compose -f deploy/compose.yaml \
	--env-file "$WORK/empty.env" config -q </dev/null 2>&1); then
	die "deploy/compose.yaml resolved without SESSION_SECRET and POSTGRES_PASSWORD"
fi
grep -q 'Missing mandatory value' <<<"$out" || { echo "$out"; die "docker-compose failed for another reason than the missing secrets"; }
say "ok: compose file valid; refused without its secrets"

# ------------------------------------------------------------------ helm

helm=$(go_tool helm.sh/helm/v3/cmd/helm "$HELM_VERSION")
kubectl_validate=$(go_tool sigs.k8s.io/kubectl-validate "$KUBECTL_VALIDATE_VERSION")

shopt -s nullglob
values_files=("$CHART"/ci/*-values.yaml)
[[ ${#values_files[@]} -gt 0 ]] || die "no values files in $CHART/ci"
for values in "${values_files[@]}"; do
	name=$(basename "$values" .yaml)
	say "helm lint --strict -f ${values#"$CHART"/}"
	timeout 120 "$helm" lint --strict "$CHART" -f "$values" --kube-version "$KUBE_VERSION.0" </dev/null >"$WORK/lint.txt" 2>&1 ||
		{ cat "$WORK/lint.txt"; die "helm lint failed for $values"; }
	mkdir -p "$WORK/$name"
	timeout 120 "$helm" template switchyard "$CHART" -f "$values" --namespace switchyard \
		--kube-version "$KUBE_VERSION.0" --output-dir "$WORK/$name" </dev/null >/dev/null
	say "kubectl-validate --version $KUBE_VERSION ($(find "$WORK/$name" -name '*.yaml' | wc -l) manifests of ${values#"$CHART"/})"
	timeout 120 "$kubectl_validate" --version "$KUBE_VERSION" --local-crds "$CHART/ci/crds" "$WORK/$name" </dev/null >"$WORK/validate.txt" 2>&1 ||
		{ cat "$WORK/validate.txt"; die "manifests rendered with $values are invalid"; }
done

# refuse VALUES... MESSAGE: helm template must fail and say MESSAGE.
refuse() {
	local message=${*: -1} out
	if out=$(timeout 60 "$helm" template switchyard "$CHART" --kube-version "$KUBE_VERSION.0" "${@:1:$#-1}" </dev/null 2>&1); then
		die "helm template accepted ${*:1:$#-1}"
	fi
	grep -qF -- "$message" <<<"$out" || { echo "$out"; die "helm template refused ${*:1:$#-1} without saying: $message"; }
}
refuse "sessionSecret must be at least 32 characters"
refuse -f "$CHART/ci/default-values.yaml" --set redis.url= "redis.url (REDIS_URL) is required"
refuse -f "$CHART/ci/default-values.yaml" --set replicaCont=3 "additional properties 'replicaCont' not allowed"
refuse -f "$CHART/ci/default-values.yaml" --set metrics.port=3000 "metrics.port must differ from 3000, the main port"
say "ok: chart lints and renders valid manifests for ${#values_files[@]} values files; refuses bad values"

say "all checks passed in $(($(date +%s) - started)) s"
