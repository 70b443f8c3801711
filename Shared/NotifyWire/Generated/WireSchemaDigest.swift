// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "c62b5d27632c27f3ce451dcf8ddbac56ed6ce13e601ca388d8459467057c9491"
}
