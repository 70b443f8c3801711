// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "77039eb301bf9eb9de7a7d2bb9b287e18628c1b0ed80b798cc5bd09c8cc22eb9"
}
