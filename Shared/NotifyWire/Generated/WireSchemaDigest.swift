// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "ab573ee5e3101aaf7b4d41e82dc317a2f36ea9a95af309de968a855a7fc77cdb"
}
