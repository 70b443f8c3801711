// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "736e9cb26b505fedf4da824cbf2c015bde0a3a3e0090d1379081dae418aac0fc"
}
