// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "8f5d4eb661fd2076ca97d182b0f86db26f40ff1ee12ee3bc30c7b8a262a0f47a"
}
