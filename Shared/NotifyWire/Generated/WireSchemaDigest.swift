// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "f7c74a45451637c872f7a5d6e07032d5e31e931fd76374415a028960eba7ba2a"
}
