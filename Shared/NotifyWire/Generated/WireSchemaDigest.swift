// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "d2ebd3707cf7c4f63560158bee40f21b200e39fd37479813ac69d090050609af"
}
