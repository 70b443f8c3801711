// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "10d4e9ebb2b92c75a160f3bc8a9a6fac9a0642835dde5cceba995de8fde79bcd"
}
