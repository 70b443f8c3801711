// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "5e5ef83e775fbedf767ec7c77b52e4f101e3343011d3fd97f799c7d9e394c3d8"
}
