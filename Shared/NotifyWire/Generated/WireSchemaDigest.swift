// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "8cc0d0795ff2c5effbcfe89597846212c4f3f129c0fe2abdfaa288a9893ef179"
}
