import Crypto
import Foundation

/// A push subscription as the push service keeps it: the user agent's half of the keys.
struct WebPushSubscription: Codable, Sendable {
    let id: String
    /// The subscription's P-256 key agreement private key, raw, base64url.
    let privateKey: String
    /// The 16-byte authentication secret, base64url.
    let auth: String
    /// The VAPID public key the subscription is restricted to (uncompressed point, base64url), if any.
    let applicationServerKey: String?
    /// Set when the browser unsubscribed: pushes are answered 410 Gone.
    var unsubscribed = false

    func keyAgreementKey() throws -> P256.KeyAgreement.PrivateKey {
        try P256.KeyAgreement.PrivateKey(rawRepresentation: Base64URL.decode(privateKey) ?? Data())
    }
}

/// `PushSubscription.toJSON()` as a browser gives it to the application server.
struct PushSubscriptionJSON: Encodable {
    struct Keys: Encodable {
        let p256dh: String
        let auth: String
    }

    let endpoint: String
    let keys: Keys

    private enum CodingKeys: String, CodingKey {
        case endpoint, expirationTime, keys
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(endpoint, forKey: .endpoint)
        try container.encodeNil(forKey: .expirationTime)
        try container.encode(keys, forKey: .keys)
    }
}

/// The push subscriptions by id, persisted as `webpush-subscriptions.json`.
final class WebPushSubscriptions: Sendable {
    private let table: PersistedTable<WebPushSubscription>

    init(file: URL) throws {
        table = try PersistedTable(file: file)
    }

    func subscription(id: String) -> WebPushSubscription? {
        table[id]
    }

    /// Subscribes as a browser's `pushManager.subscribe()` does: a new P-256 key pair and auth
    /// secret; the private key stays here, the public key and secret go to the application server.
    func create(applicationServerKey: String?, endpointBase: String) throws -> PushSubscriptionJSON {
        let privateKey = P256.KeyAgreement.PrivateKey()
        let subscription = WebPushSubscription(
            id: Base64URL.random(byteCount: 24),
            privateKey: Base64URL.encode(privateKey.rawRepresentation),
            auth: Base64URL.random(byteCount: 16),
            applicationServerKey: applicationServerKey
        )
        try table.set(subscription, id: subscription.id)
        return PushSubscriptionJSON(
            endpoint: endpointBase + "/" + subscription.id,
            keys: PushSubscriptionJSON.Keys(
                p256dh: Base64URL.encode(privateKey.publicKey.x963Representation),
                auth: subscription.auth
            )
        )
    }

    /// Marks a subscription unsubscribed; false if there is none with that id.
    func unsubscribe(id: String) throws -> Bool {
        guard var subscription = table[id] else { return false }
        subscription.unsubscribed = true
        try table.set(subscription, id: id)
        return true
    }
}
