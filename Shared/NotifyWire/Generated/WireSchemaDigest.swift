// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "715d10afd085d2214981670d0640af6a107ee187cca2cc34540e2a20a38ece30"
}
