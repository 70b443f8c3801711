// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "6fdbda2ad6131b3a399926e6c56868a13f93d6f6a0adc49a4cf5b7303d87c0ed"
}
