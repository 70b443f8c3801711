// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "2d4ff33f2a6e34e5fe9ad5ea8374c88ba4a694724af4251e6995bd12d4ffffb1"
}
