// Written by regenerate.sh: the SHA-256 of Protos/*.proto (concatenated in name order) this code was generated from.
enum WireSchemaDigest {
    static let protos = "d93d22219713f9c52bc67cfeca6ad0aab20530d2e33d19b681cb30875c31dfb5"
}
