import Foundation
import NotifyModels
import NotifyTestSupport

/// An APNs token-signing key the sandbox knows (as Apple's developer portal would), with its private half.
struct SandboxKey: Sendable {
    var keyId: String
    var teamId: String
    var topic: String
    /// The .p8 (PKCS#8 PEM) text.
    var privateKey: String
}

/// One push the sandbox accepted.
struct Delivery: Decodable, Sendable {
    /// Who the request authenticated as (FCM: the service account's email; WNS: the client id; Web Push: the VAPID key).
    var authenticatedAs: String?
    var headers: [String: String]
    var payload: JSONValue
    /// When the sandbox took it (ISO 8601).
    var receivedAt: String?

    /// `notify.id` of the payload: the notification the push is about.
    var notificationId: String? { payload["notify"]?["id"]?.stringValue }
}

/// The provider sandbox's control API: keys and recorded deliveries.
enum Sandbox {
    /// A new key from the sandbox (`POST /apns/keys`, as from Apple's developer portal) for a team of its own.
    static func newKey(topic: String) async throws -> SandboxKey {
        let teamId = "T" + randomHex(bytes: 5).uppercased().prefix(9)
        struct Request: Encodable {
            var teamId: String
            var topics: [String]
        }
        struct Created: Decodable {
            var keyId: String
            var privateKey: String
        }
        let answer = try await StackClient.send(.POST, "\(Stack.sandboxURL)/apns/keys", json: StackClient.encode(Request(teamId: teamId, topics: [topic])))
        guard answer.status == 201 else { throw TestFailure("POST /apns/keys answered \(answer.status): \(answer.text)") }
        let created = try answer.decode(Created.self)
        return SandboxKey(keyId: created.keyId, teamId: teamId, topic: topic, privateKey: created.privateKey)
    }

    /// What the APNs sandbox accepted for this device token so far, oldest first.
    static func deliveries(to deviceToken: String) async throws -> [Delivery] {
        struct Page: Decodable {
            var deliveries: [Delivery]
        }
        let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/deliveries?provider=apns&token=\(deviceToken)")
        guard answer.status == 200 else { throw TestFailure("GET /deliveries answered \(answer.status): \(answer.text)") }
        return try answer.decode(Page.self).deliveries
    }

    /// The device's deliveries, one per push id (the first of each): a push repeated on the wire (the same apns-id, as
    /// at-least-once delivery allows) is not a second publish.
    static func distinctDeliveries(to deviceToken: String) async throws -> [Delivery] {
        var seen = Set<String?>()
        return try await deliveries(to: deviceToken).filter { seen.insert($0.headers["apns-id"]).inserted }
    }

    /// Polls the device's deliveries every 75 ms until `done` holds or the timeout passes; returns the last ones seen.
    static func waitForDeliveries(
        to deviceToken: String, timeout: Duration = .seconds(20), until done: ([Delivery]) -> Bool
    ) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let deliveries = try await deliveries(to: deviceToken)
            if done(deliveries) || ContinuousClock.now >= deadline { return deliveries }
            try await Task.sleep(for: .milliseconds(75))
        }
    }

    /// Waits until the device received a push for every one of `notificationIds` (lowercased); returns the ids missing.
    static func missingNotifications(_ notificationIds: Set<String>, at deviceToken: String, timeout: Duration = .seconds(20)) async throws -> Set<String> {
        let deliveries = try await waitForDeliveries(to: deviceToken, timeout: timeout) { deliveries in
            notificationIds.isSubset(of: Set(deliveries.compactMap(\.notificationId)))
        }
        return notificationIds.subtracting(deliveries.compactMap(\.notificationId))
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var intValue: Int? { numberValue.map { Int($0) } }

    var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// The app's data of an FCM message (`self`): the JSON text under `data.data` as a document.
    var fcmAppData: JSONValue? {
        self["data"]?["data"]?.stringValue.flatMap { try? JSONValue.parse($0) }
    }

    /// The JSON document in `text` (e.g. what a script printed), ignoring whitespace around it.
    static func parse(_ text: String) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        } catch {
            throw TestFailure("not a JSON document: \(text)")
        }
    }
}
