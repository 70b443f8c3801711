// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "9ce3d1e833eb99c1bc2582a649eb9d22a1be54f7fde5a989bc2a42c85e8983d4"
}
