import Foundation
import PackagePlugin

/// Generates `OpenAPIDocument.swift` for IngestCore from `Services/ingest/openapi.yaml` at build time (with the
/// `embed-openapi` tool), so the description ingest serves is always the file's, and no copy of it is kept in git.
@main
struct EmbedOpenAPIPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let yaml = context.package.directoryURL.appending(path: "Services/ingest/openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocument.swift")
        return [
            .buildCommand(
                displayName: "Embedding openapi.yaml in \(target.name)", executable: try context.tool(named: "embed-openapi").url,
                arguments: [yaml.path, output.path], inputFiles: [yaml], outputFiles: [output]),
        ]
    }
}
