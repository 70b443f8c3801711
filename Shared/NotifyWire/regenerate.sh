#!/usr/bin/env bash
# Regenerates Generated/*.pb.swift from Protos/*.proto and records the protos' digest, which the test
# WireSchemaTests.generatedCodeMatchesProtos checks (it fails when a .proto changed and this was not run).
# Needs protoc (Debian's protobuf-compiler, installed here if missing) and protoc-gen-swift, built from this
# package's own swift-protobuf dependency (or named by PROTOC_GEN_SWIFT).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
root="$(cd -- "$here/../.." && pwd -P)"
if ! command -v protoc >/dev/null; then
    apt-get install -y protobuf-compiler >/dev/null
fi
plugin="${PROTOC_GEN_SWIFT:-}"
if [ -z "$plugin" ]; then
    (cd "$root" && swift build --product protoc-gen-swift >/dev/null)
    plugin="$(cd "$root" && swift build --show-bin-path)/protoc-gen-swift"
fi
rm -f "$here"/Generated/*.pb.swift
protoc --plugin=protoc-gen-swift="$plugin" --swift_out="$here/Generated" \
    --proto_path="$here/Protos" "$here"/Protos/*.proto
digest="$(cd "$here/Protos" && cat $(ls *.proto | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
cat >"$here/Generated/WireSchemaDigest.swift" <<SWIFT
// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "$digest"
}
SWIFT
echo "generated $(ls "$here"/Generated/*.pb.swift | wc -l) files from protos $digest"
