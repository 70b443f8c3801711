// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "aea7b5b847693ff3885dfa698ff4461c5ece76bf4d03e2d30442f3ebc9115a92"
}
