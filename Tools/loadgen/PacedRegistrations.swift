import NotifyModels

/// Registers one new user's device every 1/rate seconds for an app, each a `subscription.created` event for its webhook
/// (`loadgen neighbours`, the webhook cases): `count` at most, fewer when `stop` is set first.
struct PacedRegistrations: Sendable {
    /// How the registrations were answered.
    struct Counts: Codable, Sendable {
        /// Answered 201 or 202.
        var registered = 0
        /// Any other answer, or none.
        var failed = 0
    }

    let setup: StackSetup
    let appId: String
    /// Signs the new users' tokens.
    let signingKey: String
    /// The new users are `<prefix>-<n>`.
    let prefix: String

    func run(rate: Double, count: Int, stop: PublishStop? = nil) async -> Counts {
        let start = ContinuousClock.now
        return await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                try? await Task.sleep(until: start + .seconds(Double(index) / rate), clock: .continuous)
                if stop?.isStopped == true { break }
                group.addTask { [setup, appId, signingKey, prefix] in
                    do {
                        let bearer = try await UserToken.mint(userId: "\(prefix)-\(index)", appId: appId, signingKey: signingKey)
                        _ = try await setup.register(bearer: bearer, name: "\(prefix) device")
                        return true
                    } catch {
                        return false
                    }
                }
            }
            var counts = Counts()
            for await registered in group {
                if registered { counts.registered += 1 } else { counts.failed += 1 }
            }
            return counts
        }
    }
}
