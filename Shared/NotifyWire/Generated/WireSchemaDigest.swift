// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "e44d9c315e320f50d2baac5eba2b17b3e492ecbcf98e33fe268c506e04fea211"
}
