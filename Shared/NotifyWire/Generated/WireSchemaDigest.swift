// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "b14a158d063b8ef0e4fe04f14d05acabccdcd441056dd5dc68125ff4c433cf41"
}
