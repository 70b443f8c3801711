// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "14cedbcfc1ce566dc5e71475a3883e3c5b3ae9dfa66c069142496cf65a600d6c"
}
