import Foundation

/// The keys a browser's push subscription gives for payload encryption (RFC 8291).
public struct WebPushKeys: Codable, Sendable, Equatable {
    /// The user agent's P-256 public key, base64url (uncompressed point).
    public var p256dh: String
    /// The 16-byte authentication secret, base64url.
    public var auth: String

    public init(p256dh: String, auth: String) {
        self.p256dh = p256dh
        self.auth = auth
    }

    public func validate() throws(ValidationError) {
        guard let key = Base64URLCoding.decode(p256dh), key.count == 65, key.first == 4 else {
            throw .invalid("keys.p256dh", "p256dh must be the base64url uncompressed P-256 public key (65 bytes)")
        }
        guard let secret = Base64URLCoding.decode(auth), secret.count == 16 else {
            throw .invalid("keys.auth", "auth must be the base64url 16-byte secret")
        }
    }
}

/// Base64 with the URL alphabet and no padding.
public enum Base64URLCoding {
    public static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
