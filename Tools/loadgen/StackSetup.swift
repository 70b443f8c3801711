import Foundation
import NotifyModels

/// What setup created: one app whose APNs credentials point at the sandbox, and its users' devices.
struct LoadFixture: Sendable {
    let appId: String
    let apiKey: String
    /// Signs the users' tokens (their changes feeds).
    let clientSigningKey: String
    /// The app's broker user and its password, when it was created with broker access.
    let broker: (user: String, password: String)?
    /// `users[u]` is the id of user `u`; `deviceTokens[u]` its APNs tokens.
    let users: [String]
    let deviceTokens: [[String]]
    /// Registrations ingest answered 202 (accepted, not yet visible in storage) instead of 201.
    let registrationsNotYetVisible: Int
}

/// Creates the app, the APNs key and credentials, and the device subscriptions.
struct StackSetup: Sendable {
    let client: JSONClient
    let ingestURL: String
    let sandboxURL: String
    let sandboxAPNsURL: String
    let adminToken: String
    /// Where the sandbox APNs key is kept between runs; nil = a new key every run.
    let keyFile: String?

    static let teamId = "LOADGEN001"
    static let topic = "com.example.loadgen"

    private struct CreatedApp: Decodable {
        struct Broker: Decodable { let user: String; let password: String }
        let appId: String; let apiKey: String; let clientSigningKey: String; let broker: Broker?
    }
    private struct CreatedKey: Codable { let keyId: String; let teamId: String; let privateKey: String }
    private struct Credentials: Encodable {
        let teamId: String, keyId: String, privateKey: String, topic: String, environment: String, endpoint: String
    }
    private struct Subscription: Encodable { let platform: String; let pushToken: String; let displayName: String }
    private struct Ignored: Decodable {}

    private struct CreateApp: Encodable { let name: String; let brokerAccess: Bool }

    /// An app whose APNs credentials point at the sandbox, with a broker user of its own when `brokerAccess`.
    func createApp(runTag: String, brokerAccess: Bool = false) async throws -> (
        appId: String, apiKey: String, clientSigningKey: String, broker: (user: String, password: String)?
    ) {
        let app = try await client.call(
            .POST, "\(ingestURL)/v1/apps", bearer: adminToken, json: CreateApp(name: "loadgen \(runTag)", brokerAccess: brokerAccess),
            as: CreatedApp.self)
        let key = try await apnsKey()
        let credentials = Credentials(
            teamId: key.teamId, keyId: key.keyId, privateKey: key.privateKey, topic: Self.topic,
            environment: "sandbox", endpoint: sandboxAPNsURL)
        _ = try await client.call(
            .PUT, "\(ingestURL)/v1/apps/\(app.appId)/providers/apns", bearer: adminToken, json: credentials, as: Ignored.self)
        return (app.appId, app.apiKey, app.clientSigningKey, app.broker.map { ($0.user, $0.password) })
    }

    func run(users userCount: Int, devicesPerUser: Int, concurrency: Int, runTag: String, brokerAccess: Bool = false) async throws -> LoadFixture {
        let app = try await createApp(runTag: runTag, brokerAccess: brokerAccess)

        let users = (0..<userCount).map { "loadgen-user-\($0)" }
        let tokens = users.map { _ in (0..<devicesPerUser).map { _ in Self.randomDeviceToken() } }
        let jobs = users.indices.flatMap { user in tokens[user].indices.map { (user, $0) } }
        var userTokens: [String] = []
        for user in users { userTokens.append(try await UserToken.mint(userId: user, appId: app.appId, signingKey: app.clientSigningKey)) }
        let url = "\(ingestURL)/v1/me/subscriptions"
        var notYetVisible = 0
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            func add() {
                let (user, device) = jobs[next]
                next += 1
                let body = Subscription(platform: "apns", pushToken: tokens[user][device], displayName: "loadgen device \(device)")
                let bearer = userTokens[user]
                group.addTask {
                    let answer = try await client.send(.POST, url, bearer: bearer, body: try JSONEncoder().encode(body))
                    _ = try JSONClient.decode(Ignored.self, answer, method: .POST, url: url)
                    return answer.status
                }
            }
            while next < jobs.count, next < concurrency { add() }
            while let status = try await group.next() {
                if status == 202 { notYetVisible += 1 }
                if next < jobs.count { add() }
            }
        }
        return LoadFixture(
            appId: app.appId, apiKey: app.apiKey, clientSigningKey: app.clientSigningKey, broker: app.broker, users: users, deviceTokens: tokens, registrationsNotYetVisible: notYetVisible)
    }

    private struct KeyBody: Encodable { let teamId: String; let topics: [String] }
    private struct KeyList: Decodable {
        struct Key: Decodable { let keyId: String }
        let keys: [Key]
    }

    /// The APNs key loadgen saved in `keyFile` if the sandbox still knows it, else a new one (saved).
    /// Every run uses the same key so push-dispatch sends the same provider token on its shared
    /// connection: the sandbox answers TooManyProviderTokenUpdates when a connection's token changes.
    private func apnsKey() async throws -> CreatedKey {
        if let keyFile, let data = FileManager.default.contents(atPath: keyFile),
            let saved = try? JSONDecoder().decode(CreatedKey.self, from: data)
        {
            let listed = try await client.send(.GET, "\(sandboxURL)/apns/keys")
            let known = try JSONClient.decode(KeyList.self, listed, method: .GET, url: "\(sandboxURL)/apns/keys")
            if known.keys.contains(where: { $0.keyId == saved.keyId }) { return saved }
        }
        let url = "\(sandboxURL)/apns/keys"
        let answer = try await client.send(.POST, url, body: try JSONEncoder().encode(KeyBody(teamId: Self.teamId, topics: [Self.topic])))
        let created = try JSONClient.decode(CreatedKey.self, answer, method: .POST, url: url)
        if let keyFile {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: keyFile).deletingLastPathComponent(), withIntermediateDirectories: true)
            try answer.body.write(to: URL(fileURLWithPath: keyFile))
        }
        return created
    }

    static func randomDeviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
