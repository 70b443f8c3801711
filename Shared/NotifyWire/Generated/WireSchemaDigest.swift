// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "ca05d173b4b6a1b46d70d457370736055fd11c3795470e15c2bf67150db4eb14"
}
