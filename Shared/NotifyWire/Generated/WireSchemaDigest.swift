// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "0202e036de49f1ce62f31de2112051097b1da71eea387a56bce271d377c6a04d"
}
