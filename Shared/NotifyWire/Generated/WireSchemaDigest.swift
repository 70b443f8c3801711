// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "23b5c9bce9d922358dad17473b7c1f58286a1ca304bfc48df08ce3ebc49fbbe7"
}
