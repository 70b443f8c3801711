// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "45587739353744d4e6caceca2d33cbebe211e3c2cac29a8bd982cf3b4697c729"
}
