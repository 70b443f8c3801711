// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "61b09ff474b930b3bbce0f0b4d9dfc40ae547b62f789f058fbf17e7ea87b4cb6"
}
