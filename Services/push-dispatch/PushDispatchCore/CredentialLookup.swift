import NotifyModels

/// An app's credentials for a provider, or why a push cannot be attempted with them.
enum CredentialLookup<Credentials: Sendable>: Sendable {
    case usable(Credentials)
    case unusable(PushVerdict)
}

/// Where a provider finds an app's credentials (`CredentialStore` reads the database; a test holds them in memory).
protocol CredentialSource<Credentials>: Sendable {
    associatedtype Credentials: Sendable

    /// The app's credentials for the device's identity, or the verdict of a push that cannot be attempted with them.
    func lookup(appId: String, appPackage: String?, providerName: String) async -> CredentialLookup<Credentials>
}

extension CredentialStore: CredentialSource {
    /// The app's credentials for the device's identity (`appPackage`, else the default ones) unless it has none, the
    /// provider refused them, or the database is unreachable.
    func lookup(appId: String, appPackage: String?, providerName: String) async -> CredentialLookup<Credentials> {
        let stored: Entry?
        do {
            stored = try await credentials(appId: appId, appPackage: appPackage)
        } catch {
            return .unusable(PushVerdict(action: .retry(after: nil), status: nil, reason: "credentials lookup failed"))
        }
        guard let stored else { return .unusable(PushVerdict(action: .fail, status: nil, reason: "the app has no \(providerName) credentials")) }
        if let refusal = stored.rejectedReason {
            return .unusable(PushVerdict(
                action: .fail, status: 403, reason: "the app's \(providerName) credentials were refused (\(refusal)); store new ones"))
        }
        return .usable(stored.credentials)
    }
}
