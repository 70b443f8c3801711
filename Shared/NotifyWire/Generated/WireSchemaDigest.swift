// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "cd6a295d119414915d82cf6fa47f3a996564a0d6d804d18fd9dd9f7b30210e69"
}
