// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "b73c24c17e6716c2fb1019406bbbf113f02a561e2d8ede4f326a7fb5ddfd503d"
}
