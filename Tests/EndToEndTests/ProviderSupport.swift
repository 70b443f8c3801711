import Crypto
import Foundation
import NotifyModels
import NotifyStore
import NotifyTestSupport
import Testing

extension Stack {
    /// The sandbox's listener for FCM, WNS and Web Push (token endpoints, send endpoints, channel URIs).
    static let sandboxProvidersURL = ProcessInfo.processInfo.environment["NOTIFY_SANDBOX_PROVIDERS_URL"] ?? "https://localhost:21444"
}

/// The sandbox's control API for FCM, WNS and Web Push: credentials, device addresses, faults and records.
enum ProviderSandbox {
    /// `POST /fcm/service-accounts`: a service-account key file (as Google's console downloads it) of a new project.
    static func fcmServiceAccount() async throws -> JSONValue {
        try await create("fcm/service-accounts", ["projectId": "e2e-\(uniqueSuffix())"])
    }

    /// `POST /wns/apps` then `POST /wns/channels`: an app's client id and secret and a channel URI only it may push to.
    static func wnsAppAndChannel() async throws -> (clientId: String, clientSecret: String, channelUri: String) {
        let app = try await create("wns/apps", [:])
        let clientId = try #require(app["clientId"]?.stringValue)
        let channel = try await create("wns/channels", ["clientId": clientId])
        return (clientId, try #require(app["clientSecret"]?.stringValue), try #require(channel["channelUri"]?.stringValue))
    }

    /// `POST /webpush/subscriptions`: a browser's PushSubscription for the VAPID key `applicationServerKey`.
    static func webPushSubscription(applicationServerKey: String) async throws -> (endpoint: String, keys: WebPushKeys) {
        let subscription = try await create("webpush/subscriptions", ["applicationServerKey": applicationServerKey])
        let keys = WebPushKeys(
            p256dh: try #require(subscription["keys"]?["p256dh"]?.stringValue), auth: try #require(subscription["keys"]?["auth"]?.stringValue))
        return (try #require(subscription["endpoint"]?.stringValue), keys)
    }

    private struct FaultRequest: Encodable {
        var provider: String
        var token: String
        var status: Int?
        var reason: String?
        var retryAfter: Int?
        var retryAfterAsDate: Bool?
        var delayMilliseconds: Int?
        var times: Int?
        var timestamp: Int64?
    }

    /// `POST /faults`: the next `times` pushes to `token` (every one if nil) are answered with `status` (normally if nil),
    /// each after `delayMilliseconds` if given.
    static func fault(
        _ provider: String, token: String, status: Int? = nil, reason: String? = nil, retryAfter: Int? = nil, retryAfterAsDate: Bool = false,
        delayMilliseconds: Int? = nil, times: Int? = 1, timestamp: Date? = nil
    ) async throws {
        let request = FaultRequest(
            provider: provider, token: token, status: status, reason: reason, retryAfter: retryAfter,
            retryAfterAsDate: retryAfterAsDate ? true : nil, delayMilliseconds: delayMilliseconds, times: times,
            timestamp: timestamp.map { Int64($0.timeIntervalSince1970 * 1000) })
        let answer = try await StackClient.send(.POST, "\(Stack.sandboxURL)/faults", json: StackClient.encode(request))
        guard answer.status == 201 else { throw TestFailure("POST /faults answered \(answer.status): \(answer.text)") }
    }

    /// What the sandbox accepted for `provider` and this device token (the last path segment of a URI), oldest first.
    static func deliveries(_ provider: String, to token: String) async throws -> [Delivery] {
        struct Page: Decodable {
            var deliveries: [Delivery]
        }
        let query = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/deliveries?provider=\(provider)&token=\(query)")
        guard answer.status == 200 else { throw TestFailure("GET /deliveries answered \(answer.status): \(answer.text)") }
        return try answer.decode(Page.self).deliveries
    }

    /// Polls until `done` holds or the timeout passes; returns the last deliveries seen.
    static func waitForDeliveries(
        _ provider: String, to token: String, timeout: Duration = .seconds(20), until done: ([Delivery]) -> Bool = { !$0.isEmpty }
    ) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let deliveries = try await deliveries(provider, to: token)
            if done(deliveries) || ContinuousClock.now >= deadline { return deliveries }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// `POST /captures`: from now on the sandbox keeps the requests to `path` on its providers listener as they arrived
    /// (every header, `authorization` too, and the body's bytes); answers the capture's id.
    static func capture(_ path: String) async throws -> String {
        let answer = try await StackClient.send(.POST, "\(Stack.sandboxURL)/captures", json: StackClient.encode(["path": path]))
        guard answer.status == 201 else { throw TestFailure("POST /captures answered \(answer.status): \(answer.text)") }
        return try #require(try answer.decode(JSONValue.self)["captureId"]?.stringValue)
    }

    /// The requests a capture kept, polled until `done` holds or 20 s passed; the capture is deleted afterwards.
    static func capturedRequests(_ captureId: String, until done: ([JSONValue]) -> Bool = { !$0.isEmpty }) async throws -> [JSONValue] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/captures/\(captureId)")
            guard answer.status == 200 else { throw TestFailure("GET /captures/\(captureId) answered \(answer.status): \(answer.text)") }
            let requests = try answer.decode(JSONValue.self)["requests"]?.arrayValue ?? []
            if done(requests) || ContinuousClock.now >= deadline {
                _ = try await StackClient.send(.DELETE, "\(Stack.sandboxURL)/captures/\(captureId)")
                return requests
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// `GET /webpush/subscriptions/{id}`: the browser's half of a subscription's keys (`privateKey`, `auth`).
    static func webPushBrowserKeys(_ subscriptionId: String) async throws -> JSONValue {
        let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/webpush/subscriptions/\(subscriptionId)")
        guard answer.status == 200 else { throw TestFailure("GET /webpush/subscriptions/\(subscriptionId) answered \(answer.status): \(answer.text)") }
        return try answer.decode(JSONValue.self)
    }

    private static func create(_ path: String, _ body: [String: String]) async throws -> JSONValue {
        let answer = try await StackClient.send(.POST, "\(Stack.sandboxURL)/\(path)", json: StackClient.encode(body))
        guard answer.status == 201 else { throw TestFailure("POST /\(path) answered \(answer.status): \(answer.text)") }
        return try answer.decode(JSONValue.self)
    }
}

/// One entry of a notification's delivery log.
struct DeliveryLogEntry: Decodable, Sendable {
    var subscriptionId: String
    var attempt: Int
    var result: String
    var status: Int?
    var reason: String?
}

extension TestApp {
    /// `PUT /v1/apps/{appId}/providers/{provider}` with `credentials` (for the app identity `appPackage`, if given);
    /// answers the stored description.
    @discardableResult
    func storeCredentials(_ provider: String, _ credentials: some Encodable, appPackage: String? = nil) async throws -> JSONValue {
        let path = "/v1/apps/\(appId)/providers/\(provider)" + (appPackage.map { "?appPackage=\($0)" } ?? "")
        let answer = try await StackClient.send(.PUT, Stack.ingestURL + path, bearer: Stack.adminToken, json: StackClient.encode(credentials))
        guard answer.status == 200 else { throw TestFailure("PUT \(path) answered \(answer.status): \(answer.text)") }
        return try answer.decode(JSONValue.self)
    }

    /// Stores the sandbox WNS app `packageSid` as the app's WNS credentials, its token endpoint the sandbox's.
    func storeWNSCredentials(packageSid: String, clientSecret: String, appPackage: String? = nil) async throws {
        struct Credentials: Encodable {
            var packageSid: String
            var clientSecret: String
            var tokenURL = Stack.sandboxProvidersURL + "/wns/token"
        }
        try await storeCredentials("wns", Credentials(packageSid: packageSid, clientSecret: clientSecret), appPackage: appPackage)
    }

    /// Stores a new sandbox service account as the app's FCM credentials; `adjust` may alter the key file first.
    /// Answers the key file stored.
    @discardableResult
    func storeFCMCredentials(appPackage: String? = nil, adjusting adjust: (JSONValue) -> JSONValue = { $0 }) async throws -> JSONValue {
        struct Credentials: Encodable {
            var serviceAccount: JSONValue
            /// The sandbox serves FCM's API under /fcm: `{endpoint}/v1/projects/{project}/messages:send`.
            var endpoint = Stack.sandboxProvidersURL + "/fcm"
        }
        let serviceAccount = adjust(try await ProviderSandbox.fcmServiceAccount())
        try await storeCredentials("fcm", Credentials(serviceAccount: serviceAccount), appPackage: appPackage)
        return serviceAccount
    }

    /// Registers a device of `userId` (of the app identity `appPackage`, if given); returns its subscription id.
    func registerDevice(
        of userId: String, platform: Platform, pushToken: String, keys: WebPushKeys? = nil, appPackage: String? = nil
    ) async throws -> String {
        let answer = try await registerDevice(
            SubscriptionRequest(
                platform: platform, pushToken: pushToken, keys: keys, appPackage: appPackage, displayName: "e2e \(platform.rawValue) device"),
            token: try await userToken(userId))
        guard answer.status == 201 || answer.status == 202 else { throw TestFailure("POST /v1/me/subscriptions answered \(answer.status): \(answer.text)") }
        return try #require(try answer.decode(JSONValue.self)["subscriptionId"]?.stringValue)
    }

    /// The notification's whole delivery log, read `limit` entries a page; fails on a page that is not 200 or not
    /// `limit` long while a next page is announced.
    func deliveryLogPages(of notificationId: String, limit: Int) async throws -> [DeliveryLogEntry] {
        struct Page: Decodable {
            var deliveries: [DeliveryLogEntry]
            var nextPageToken: String?
        }
        var entries: [DeliveryLogEntry] = []
        var token: String?
        repeat {
            let query = "limit=\(limit)" + (token.map { "&pageToken=\($0)" } ?? "")
            let answer = try await StackClient.send(
                .GET, "\(Stack.ingestURL)/v1/apps/\(appId)/notifications/\(notificationId)/deliveries?\(query)", bearer: apiKey)
            guard answer.status == 200 else { throw TestFailure("GET .../deliveries?\(query) answered \(answer.status): \(answer.text)") }
            let page = try answer.decode(Page.self)
            entries += page.deliveries
            token = page.nextPageToken
            if token != nil && page.deliveries.count != limit { throw TestFailure("a page of \(page.deliveries.count) with a next page") }
        } while token != nil
        return entries
    }

    /// The notification's delivery log, polled until `done` holds or 20 s passed.
    func deliveryLog(of notificationId: String, until done: ([DeliveryLogEntry]) -> Bool) async throws -> [DeliveryLogEntry] {
        struct Log: Decodable {
            var deliveries: [DeliveryLogEntry]
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let answer = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(appId)/notifications/\(notificationId)/deliveries", bearer: apiKey)
            guard answer.status == 200 else { throw TestFailure("GET .../deliveries answered \(answer.status): \(answer.text)") }
            let entries = try answer.decode(Log.self).deliveries
            if done(entries) || ContinuousClock.now >= deadline { return entries }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

extension Database {
    /// Whether the app's device subscription is still stored, polled until it is `expected` or `timeout` passed.
    static func subscriptionExists(
        _ subscriptionId: String, of appId: String, expecting expected: Bool, timeout: Duration = .seconds(20)
    ) async throws -> Bool {
        let id = try #require(UUID(uuidString: subscriptionId))
        return try await withClient { client in
            let devices = PostgresDeviceStore(client: client, logger: testLogger)
            let deadline = ContinuousClock.now + timeout
            while true {
                let exists = try await devices.owner(appId: appId, subscriptionId: id) != nil
                if exists == expected || ContinuousClock.now >= deadline { return exists }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// The reason the app's credentials for `provider` were flagged as refused, polled until set or `timeout` passed.
    static func credentialsRejection(appId: String, provider: String, timeout: Duration = .seconds(20)) async throws -> String? {
        try await withClient { client in
            let apps = PostgresAppStore(client: client, logger: testLogger)
            let deadline = ContinuousClock.now + timeout
            while true {
                let providers = try await apps.apps(after: nil, limit: 1, appId: appId).first?.providers ?? []
                if let reason = providers.first(where: { $0.provider == provider && $0.rejectedReason != nil })?.rejectedReason { return reason }
                if ContinuousClock.now >= deadline { return nil }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}

/// Waits `duration` for anything more to show up, then answers the deliveries: for checks that something did NOT arrive.
func deliveriesAfterQuietPeriod(_ provider: String, to token: String, duration: Duration = .seconds(2)) async throws -> [Delivery] {
    try await Task.sleep(for: duration)
    return try await ProviderSandbox.deliveries(provider, to: token)
}

extension PushOptions {
    /// Every presentation option at once, for the tests that check where each goes on each provider.
    static let everyOption = PushOptions(
        sound: "chime.caf", category: "OPEN_ORDER", subtitle: "Order 42", titleLocKey: "SHIPPED_TITLE", titleLocArgs: ["42"],
        bodyLocKey: "SHIPPED_BODY", bodyLocArgs: ["Ana", "Tuesday"], imageUrl: "https://cdn.example.com/parcel.png", launchImage: "Parcel",
        mutableContent: true, interruptionLevel: .timeSensitive, relevanceScore: 0.75, data: ["orderId": .string("42")])
}

extension PushOptions {
    /// App data under names notify's own payload keys and options use and names each provider keeps for itself (`aps`,
    /// FCM's `from`), a deep link and an Android channel: for the tests that check each provider keeps the app's data
    /// apart and opens the link.
    static let appDataAndLink = PushOptions(
        sound: "chime.caf", category: "OPEN_ORDER", url: "https://shop.example.com/orders/42?tab=tracking", androidChannelId: "orders",
        data: appDataOfEveryName)

    /// The app data of `appDataAndLink`.
    static let appDataOfEveryName: [String: JSONValue] = [
        "category": .string("x"), "title": .string("y"), "sound": .string("z"), "aps": .string("a"), "notify": .number(1), "from": .string("f"),
        "notifyId": .bool(true),
    ]
}

extension NotificationRequest {
    /// An alert to `userId` in the group "orders" with `push`.
    static func alert(to userId: String, push: PushOptions) -> NotificationRequest {
        NotificationRequest(
            userId: userId, groupName: "orders", payload: NotificationPayload(visualContent: VisualContent(title: "Order shipped", body: "On its way")),
            push: push)
    }
}
