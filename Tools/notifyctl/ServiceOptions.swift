import ArgumentParser
import Foundation

/// The options every command takes: where ingest is, the caller's credentials, and how answers are printed. Each
/// falls back on an environment variable, then on the local stack's value where there is one.
struct ServiceOptions: ParsableArguments {
    @Option(help: "Ingest's base URL (env NOTIFY_URL; default http://127.0.0.1:21080).")
    var url: String?

    // The secrets here (--admin-token, --api-key) may begin with "-": the word after the option is its value.
    @Option(parsing: .unconditional, help: "The operator's admin token (env NOTIFY_ADMIN_TOKEN; default local-admin-token).")
    var adminToken: String?

    @Option(help: "The app's id (env NOTIFY_APP_ID).")
    var app: String?

    @Option(parsing: .unconditional, help: "The app's API key (env NOTIFY_API_KEY).")
    var apiKey: String?

    @Flag(help: "Print the service's JSON answer as it came (for scripts) instead of tables and lines.")
    var json = false

    /// A client of ingest at the URL given; it keeps refused answers for --json to print.
    var client: ServiceClient {
        var base = url ?? Self.environment("NOTIFY_URL") ?? "http://127.0.0.1:21080"
        while base.hasSuffix("/") { base.removeLast() }
        return ServiceClient(baseURL: base, echoesAnswers: json)
    }

    var operatorToken: String {
        adminToken ?? Self.environment("NOTIFY_ADMIN_TOKEN") ?? "local-admin-token"
    }

    /// The app the command acts on (--app or NOTIFY_APP_ID); wrong usage without one.
    func appId() throws -> String {
        try Self.required(app, variable: "NOTIFY_APP_ID", option: "--app")
    }

    /// The app server's credential (--api-key or NOTIFY_API_KEY); wrong usage without one.
    func appKey() throws -> String {
        try Self.required(apiKey, variable: "NOTIFY_API_KEY", option: "--api-key")
    }

    /// A variable of the environment; an empty one counts as unset.
    static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func required(_ value: String?, variable: String, option: String) throws -> String {
        guard let found = value ?? environment(variable), !found.isEmpty else {
            throw UsageError("this command needs \(option) (or \(variable) in the environment)")
        }
        return found
    }
}
