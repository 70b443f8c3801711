@testable import PushDispatchCore

/// An app's credentials held in memory (what `CredentialStore` reads from the database).
struct FixedCredentials<Credentials: Sendable>: CredentialSource {
    var answer: CredentialLookup<Credentials>

    init(_ credentials: Credentials) { answer = .usable(credentials) }

    func lookup(appId _: String, appPackage _: String?, providerName _: String) async -> CredentialLookup<Credentials> { answer }
}
