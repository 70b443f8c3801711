// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "db866ca7d542453385668219efb96d1894ea1cb8429dee7767cc39d725e1c63b"
}
