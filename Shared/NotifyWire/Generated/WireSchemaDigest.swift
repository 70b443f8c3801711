// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "387145783882fe050e8becc1029948fdf5a025fe340d995625f6c743a249b4cf"
}
