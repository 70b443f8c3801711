// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "a8e875d908f4c1a051881e7e33b6373d27a02aa3f151a69da8e740a616623a1d"
}
