import ArgumentParser
import NotifyModels

/// `notifyctl api-keys`: the app's scoped API keys (a key that may administer the app).
struct APIKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "Create, list and revoke the app's scoped API keys: keys that only publish, only read, or administer the app.",
        subcommands: [CreateAPIKeyCommand.self, ListAPIKeysCommand.self, RevokeAPIKeyCommand.self]
    )

    /// `/v1/apps/{appId}/api-keys`, or one key's path under it.
    static func path(_ options: ServiceOptions, keyId: String? = nil) throws -> String {
        let keys = "/v1/apps/\(ServiceClient.escaped(try options.appId()))/api-keys"
        return keyId.map { "\(keys)/\(ServiceClient.escaped($0))" } ?? keys
    }
}

/// `api-keys create`: a new key, printed this once.
struct CreateAPIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a scoped API key; the key is printed this once.")

    @OptionGroup var options: ServiceOptions

    @Option(help: "What the key may do: publish (deliver and modify notifications), read, or admin.")
    var scope: APIKeyScope

    @Option(help: "What the key is for, as listings show it.")
    var name: String

    func run() async throws {
        let answer = try await options.client.call(
            .POST, try APIKeysCommand.path(options), bearer: try options.appKey(), json: APIKeyRequest(scope: scope, name: name))
        try options.present(answer, as: APIKeyView.self) { key in
            var fields = FieldList()
            fields.add("keyId", key.keyId)
            fields.add("scope", key.scope.rawValue)
            fields.add("name", key.name)
            fields.add("apiKey", key.apiKey)
            fields.print()
        }
    }
}

/// `api-keys list`: every scoped key, without its secret.
struct ListAPIKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the app's scoped API keys with their last use.")

    @OptionGroup var options: ServiceOptions

    private struct Listing: Codable {
        var apiKeys: [APIKeyView]
    }

    func run() async throws {
        let answer = try await options.client.call(.GET, try APIKeysCommand.path(options), bearer: try options.appKey())
        try options.present(answer, as: Listing.self) { listing in
            guard !listing.apiKeys.isEmpty else { return Output.line("no scoped API keys") }
            var table = TextTable("KEY", "SCOPE", "NAME", "CREATED", "LAST USED", "REVOKED")
            for key in listing.apiKeys {
                table.add(
                    key.keyId, key.scope.rawValue, key.name, WireCoding.formatTimestamp(key.createdAt),
                    key.lastUsedAt.map(WireCoding.formatTimestamp) ?? "never", key.revokedAt.map(WireCoding.formatTimestamp) ?? "")
            }
            table.print()
        }
    }
}

/// `api-keys revoke`: a key stops working on every instance.
struct RevokeAPIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a scoped API key.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The key's id (key_…), as listed.")
    var keyId: String

    func run() async throws {
        _ = try await options.client.call(.DELETE, try APIKeysCommand.path(options, keyId: keyId), bearer: try options.appKey())
        guard !options.json else { return }
        Output.line("revoked \(keyId)")
    }
}
