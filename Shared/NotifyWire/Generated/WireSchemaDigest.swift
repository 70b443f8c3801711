// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "b3e9aba64d5fddf707c9c276b1349885b55be34715ec5410f47a7ad1fd94e464"
}
