import Foundation

/// An app's rate limit (`PATCH /v1/apps/{appId}` as the operator): `perSecond` requests and notifications per second.
struct AppRateLimit: Sendable {
    let perSecond: Int

    private struct Settings: Encodable {
        struct Limit: Encodable { let requestsPerSecond: Int; let notificationsPerSecond: Int }
        let rateLimit: Limit
    }

    private struct StoredSettings: Decodable {}

    /// Sets the app's limit; again until ingest answers 200 (stored and read back), not 202, so that its next read of the
    /// app (cached for 30 s) has the limit.
    func apply(client: JSONClient, ingest: String, admin: String, appId: String) async throws {
        let url = "\(ingest)/v1/apps/\(appId)"
        let body = try JSONEncoder().encode(Settings(rateLimit: .init(requestsPerSecond: perSecond, notificationsPerSecond: perSecond)))
        for _ in 0..<20 {
            let answer = try await client.send(.PATCH, url, bearer: admin, body: body)
            _ = try JSONClient.decode(StoredSettings.self, answer, method: .PATCH, url: url)
            if answer.status == 200 { return }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw LoadGenError("PATCH \(url) answered 202 (not yet stored) for 10 s: the limit may not be in force")
    }
}
