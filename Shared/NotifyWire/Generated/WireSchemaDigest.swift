// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "60886bd0f04b35df202c43c8f55247be35211ffcdfc975be938bfe2bb75e742e"
}
