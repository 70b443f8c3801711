import NotifyModels

/// An app's credentials for a provider, or why a push cannot be attempted with them.
enum CredentialLookup<Credentials: Sendable>: Sendable {
    case usable(Credentials)
    case unusable(PushVerdict)
}

extension CredentialStore {
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
