import Crypto
import Foundation

/// The key-encryption keys that seal the secrets stored for apps (provider credentials, client signing keys, webhook
/// secrets, poll sources' Authorization headers) with AES-256-GCM, so that neither the database nor a broker message ever holds one in plaintext.
///
/// A sealed secret is text: `sealed:v1:<keyId>:<base64 of nonce, ciphertext and tag>`; the key id says which key opens
/// it, and the secret's place (`SecretPurpose`: which app, which column) is authenticated with it, so a sealed value
/// copied to another app's row does not open. The first key seals; every key opens. Rotating the key-encryption key
/// without downtime: add the new key second on every service, then move it first; storage re-seals what older keys
/// sealed (`notify_secrets_on_retired_keys` reaches 0), after which the old key can go.
public struct SecretKeyring: Sendable {
    /// Why a secret could not be sealed or opened, or the keys not read. Never holds a secret or a key.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public enum Code: String, Sendable {
            /// The keys given at start-up are not `id:base64-of-32-bytes` entries.
            case invalidKeys
            /// The value was sealed with a key id this keyring does not have.
            case unknownKey
            /// The value does not open: altered, truncated, or sealed for another place.
            case notAuthentic
        }

        public var code: Code
        public var message: String

        public var description: String { "\(code.rawValue): \(message)" }
    }

    public static let prefix = "sealed:v1:"

    /// The id of the key that seals.
    public let activeKeyId: String
    private let keys: [String: SymmetricKey]

    /// Keys as `id:base64` entries separated by commas or newlines (32-byte keys, ids of letters, digits, `-` and `_`);
    /// the first seals.
    public init(parsing text: String) throws(Failure) {
        var keys: [String: SymmetricKey] = [:]
        var first: String?
        for entry in text.split(whereSeparator: { $0 == "," || $0 == "\n" }).map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            if entry.hasPrefix("#") { continue }
            guard let colon = entry.firstIndex(of: ":") else {
                throw Failure(code: .invalidKeys, message: "each key is id:base64 (an entry has no ':')")
            }
            let id = String(entry[..<colon])
            guard !id.isEmpty, id.count <= 32, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw Failure(code: .invalidKeys, message: "a key id is 1 to 32 letters, digits, '-' or '_'")
            }
            guard let bytes = Data(base64Encoded: String(entry[entry.index(after: colon)...])), bytes.count == 32 else {
                throw Failure(code: .invalidKeys, message: "key \(id) is not the base64 of 32 bytes")
            }
            guard keys[id] == nil else { throw Failure(code: .invalidKeys, message: "key id \(id) is given twice") }
            keys[id] = SymmetricKey(data: bytes)
            if first == nil { first = id }
        }
        guard let first else { throw Failure(code: .invalidKeys, message: "no key is given") }
        self.keys = keys
        activeKeyId = first
    }

    /// A new random key entry (`id:base64`), for an operator's key file.
    public static func generateEntry(id: String) -> String {
        "\(id):" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// `plaintext` sealed with the active key for `purpose`.
    public func seal(_ plaintext: some DataProtocol, for purpose: SecretPurpose) -> String {
        // AES-GCM with a random 96-bit nonce cannot fail for these inputs.
        let box = try! AES.GCM.seal(plaintext, using: keys[activeKeyId]!, authenticating: Data(purpose.context.utf8))
        return Self.prefix + activeKeyId + ":" + box.combined!.base64EncodedString()
    }

    /// `plaintext`'s UTF-8 bytes sealed with the active key for `purpose`.
    public func seal(_ plaintext: String, for purpose: SecretPurpose) -> String {
        seal(Data(plaintext.utf8), for: purpose)
    }

    /// The plaintext of a value `seal` made for `purpose`; a value that is not sealed (written before secrets were
    /// sealed, until storage re-seals it) is answered as it is.
    public func open(_ stored: String, for purpose: SecretPurpose) throws(Failure) -> Data {
        guard stored.hasPrefix(Self.prefix) else { return Data(stored.utf8) }
        let rest = stored.dropFirst(Self.prefix.count)
        guard let colon = rest.firstIndex(of: ":"), let combined = Data(base64Encoded: String(rest[rest.index(after: colon)...])) else {
            throw Failure(code: .notAuthentic, message: "\(purpose.context) is not a sealed value")
        }
        let keyId = String(rest[..<colon])
        guard let key = keys[keyId] else {
            throw Failure(code: .unknownKey, message: "\(purpose.context) was sealed with key \(keyId), which is not among the service's secret keys")
        }
        do {
            return try AES.GCM.open(try AES.GCM.SealedBox(combined: combined), using: key, authenticating: Data(purpose.context.utf8))
        } catch {
            throw Failure(code: .notAuthentic, message: "\(purpose.context) does not open with key \(keyId)")
        }
    }

    /// `open`'s plaintext as UTF-8 text.
    public func openText(_ stored: String, for purpose: SecretPurpose) throws(Failure) -> String {
        String(decoding: try open(stored, for: purpose), as: UTF8.self)
    }

    /// Whether `stored` is sealed with the active key (otherwise storage re-seals it).
    public func isSealedWithActiveKey(_ stored: String) -> Bool {
        stored.hasPrefix(Self.prefix + activeKeyId + ":")
    }
}

/// Where a sealed secret belongs; authenticated with it, so it opens only there.
public enum SecretPurpose: Sendable, Equatable {
    /// An app's credentials for a provider; for one of its app identities when `appPackage` is not empty.
    case providerCredentials(appId: String, provider: Platform, appPackage: String = "")
    /// The app's client signing key, and the one a rotation replaced (still accepted during its overlap).
    case clientSigningKey(appId: String)
    case webhookSecret(appId: String)
    /// The Authorization header of an app's poll source.
    case pollSourceAuthorization(appId: String, name: String)

    var context: String {
        switch self {
        case .providerCredentials(let appId, let provider, let appPackage):
            "app_credentials.secret/\(appId)/\(provider.rawValue)" + (appPackage.isEmpty ? "" : "/\(appPackage)")
        case .clientSigningKey(let appId): "apps.client_signing_key/\(appId)"
        case .webhookSecret(let appId): "app_webhooks.secret/\(appId)"
        case .pollSourceAuthorization(let appId, let name): "poll_sources.authorization_header/\(appId)/\(name)"
        }
    }
}

// Printed in logs (a service holding a keyring is described at debug level): the key ids, never a key.
extension SecretKeyring: CustomStringConvertible {
    public var description: String { "SecretKeyring(sealing with \(activeKeyId), \(keys.count) keys)" }
}
