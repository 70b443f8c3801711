// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "81dcf57c54bfe881e99209ad7dac0fc5c6a53afdb76f168052473cb91b2159a9"
}
