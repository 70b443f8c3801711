// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "d4bd2865f5c7728126cd11f2d8c709671db8e7761908d08510ce789bc4d7508a"
}
