// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "30a1d7ba52ec54f32011162454b2069b34e97e53039392eb4f64968c806765b5"
}
