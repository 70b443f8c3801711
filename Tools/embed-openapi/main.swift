import Foundation

/// `embed-openapi <openapi.yaml> <OpenAPIDocument.swift>`: writes a Swift file whose `OpenAPIDocument.yaml` is the
/// YAML file's text, so ingest serves its OpenAPI description from its binary (no resource bundle to ship beside it).
/// Run by the `EmbedOpenAPI` build tool plugin on every build of IngestCore that finds the YAML changed.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: embed-openapi <openapi.yaml> <OpenAPIDocument.swift>\n".utf8))
    exit(2)
}
do {
    let yaml = try String(contentsOf: URL(fileURLWithPath: arguments[1]), encoding: .utf8)
    // A raw string whose delimiter no run of # in the document can end: one # more than the longest run after a quote.
    var longest = 0
    var run = 0
    var afterQuote = false
    for character in yaml {
        if character == "#" && afterQuote {
            run += 1
            longest = max(longest, run)
        } else {
            run = 0
            afterQuote = character == "\""
        }
    }
    let hashes = String(repeating: "#", count: longest + 1)
    let text = yaml.hasSuffix("\n") ? String(yaml.dropLast()) : yaml
    let swift = """
        // Generated at build time from Services/ingest/openapi.yaml by the EmbedOpenAPI plugin (Tools/embed-openapi).

        /// The OpenAPI 3.1 description of the HTTP API, as `GET /openapi.yaml` serves it.
        enum OpenAPIDocument {
            static let yaml = \(hashes)\"\"\"
        \(text)
        \"\"\"\(hashes)
        }

        """
    try Data(swift.utf8).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("embed-openapi: \(error)\n".utf8))
    exit(1)
}
