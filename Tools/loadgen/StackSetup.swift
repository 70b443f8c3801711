import Crypto
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
    /// `users[u]` is the id of user `u`; `deviceTokens[u]` its devices' tokens as the sandbox records them (APNs tokens,
    /// or the ids of Web Push subscriptions at the sandbox).
    let users: [String]
    let deviceTokens: [[String]]
    /// Registrations ingest answered 202 (accepted, not yet visible in storage) instead of 201.
    let registrationsNotYetVisible: Int
}

/// The devices setup registers: APNs, or Web Push subscriptions at the sandbox (the app then gets a VAPID key too).
enum DeviceKind: String, Sendable {
    case apns
    case webPush = "webpush"
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
    private struct Ignored: Decodable {}
    private struct WebPushCredentials: Encodable { let vapidPrivateKey: String; let subject: String }
    private struct StoredWebPushCredentials: Decodable { let vapidPublicKey: String }
    private struct BrowserSubscription: Decodable { let endpoint: String; let keys: WebPushKeys }

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

    func run(
        users userCount: Int, devicesPerUser: Int, concurrency: Int, runTag: String, brokerAccess: Bool = false, devices kind: DeviceKind = .apns
    ) async throws -> LoadFixture {
        let app = try await createApp(runTag: runTag, brokerAccess: brokerAccess)
        let vapidPublicKey = kind == .webPush ? try await storeWebPushCredentials(appId: app.appId) : nil

        let users = (0..<userCount).map { "loadgen-user-\($0)" }
        let jobs = users.indices.flatMap { user in (0..<devicesPerUser).map { (user, $0) } }
        var userTokens: [String] = []
        for user in users { userTokens.append(try await UserToken.mint(userId: user, appId: app.appId, signingKey: app.clientSigningKey)) }
        var tokens = users.map { _ in [String](repeating: "", count: devicesPerUser) }
        var notYetVisible = 0
        try await withThrowingTaskGroup(of: (user: Int, device: Int, token: String, status: Int).self) { group in
            var next = 0
            func add() {
                let (user, device) = jobs[next]
                next += 1
                let bearer = userTokens[user]
                group.addTask {
                    let (token, status) = try await register(bearer: bearer, name: "loadgen device \(device)", vapidPublicKey: vapidPublicKey)
                    return (user, device, token, status)
                }
            }
            while next < jobs.count, next < concurrency { add() }
            while let registered = try await group.next() {
                tokens[registered.user][registered.device] = registered.token
                if registered.status == 202 { notYetVisible += 1 }
                if next < jobs.count { add() }
            }
        }
        return LoadFixture(
            appId: app.appId, apiKey: app.apiKey, clientSigningKey: app.clientSigningKey, broker: app.broker, users: users, deviceTokens: tokens, registrationsNotYetVisible: notYetVisible)
    }

    /// Registers one device as the user `bearer` signs for: an APNs device with a random token, or (with the app's
    /// `vapidPublicKey`) a Web Push subscription made at the sandbox. Answers the token the sandbox records its pushes
    /// under, and ingest's status (201, or 202: accepted, not yet visible).
    func register(bearer: String, name: String, vapidPublicKey: String? = nil) async throws -> (token: String, status: Int) {
        let body: SubscriptionRequest
        let token: String
        if let vapidPublicKey {
            let url = "\(sandboxURL)/webpush/subscriptions"
            let browser = try await client.call(.POST, url, json: ["applicationServerKey": vapidPublicKey], as: BrowserSubscription.self)
            body = SubscriptionRequest(platform: .webpush, pushToken: browser.endpoint, keys: browser.keys, displayName: name)
            token = String(browser.endpoint.split(separator: "/").last ?? "")
        } else {
            token = Self.randomDeviceToken()
            body = SubscriptionRequest(platform: .apns, pushToken: token, displayName: name)
        }
        let url = "\(ingestURL)/v1/me/subscriptions"
        let answer = try await client.send(.POST, url, bearer: bearer, body: try JSONEncoder().encode(body))
        _ = try JSONClient.decode(Ignored.self, answer, method: .POST, url: url)
        return (token, answer.status)
    }

    /// Stores a new VAPID key as the app's Web Push credentials; answers its public key (what browsers subscribe with).
    private func storeWebPushCredentials(appId: String) async throws -> String {
        let credentials = WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation, subject: "mailto:loadgen@example.com")
        return try await client.call(
            .PUT, "\(ingestURL)/v1/apps/\(appId)/providers/webpush", bearer: adminToken, json: credentials, as: StoredWebPushCredentials.self
        ).vapidPublicKey
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
