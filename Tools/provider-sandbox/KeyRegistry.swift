import Crypto
import Foundation
import Synchronization

/// An APNs token-signing key as Apple's developer portal knows it: its public half only.
struct APNsKey: Sendable {
    let keyId: String
    let teamId: String
    let topics: [String]
    /// The P-256 public key in raw (x || y) form: `P256.Signing.PublicKey` is not `Sendable`.
    let rawPublicKey: Data

    init(keyId: String, teamId: String, topics: [String], publicKey: P256.Signing.PublicKey) {
        self.keyId = keyId
        self.teamId = teamId
        self.topics = topics
        self.rawPublicKey = publicKey.rawRepresentation
    }

    func publicKey() throws -> P256.Signing.PublicKey {
        try P256.Signing.PublicKey(rawRepresentation: rawPublicKey)
    }
}

/// The registered APNs keys, persisted as `keys.json` in the state directory so they survive restarts.
final class KeyRegistry: Sendable {
    /// The on-disk form of one key.
    private struct StoredKey: Codable {
        let keyId: String
        let teamId: String
        let topics: [String]
        let publicKey: String
    }

    private static let identifierAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    private let file: URL
    private let keys: Mutex<[String: APNsKey]>

    /// Loads the keys saved in `file`, if it exists.
    init(file: URL) throws {
        self.file = file
        var keys: [String: APNsKey] = [:]
        if FileManager.default.fileExists(atPath: file.path) {
            for stored in try JSONDecoder().decode([StoredKey].self, from: Data(contentsOf: file)) {
                keys[stored.keyId] = APNsKey(
                    keyId: stored.keyId,
                    teamId: stored.teamId,
                    topics: stored.topics,
                    publicKey: try P256.Signing.PublicKey(pemRepresentation: stored.publicKey)
                )
            }
        }
        self.keys = Mutex(keys)
    }

    /// Whether `value` has the shape of an Apple key or team identifier: 10 uppercase letters or digits.
    static func isIdentifier(_ value: String) -> Bool {
        value.count == 10 && value.allSatisfy { identifierAlphabet.contains($0) }
    }

    func key(id: String) -> APNsKey? {
        keys.withLock { $0[id] }
    }

    var all: [APNsKey] {
        keys.withLock { $0.values.sorted { $0.keyId < $1.keyId } }
    }

    /// Registers (or replaces) a key and saves the registry.
    func register(_ key: APNsKey) throws {
        try keys.withLock { keys in
            var updated = keys
            updated[key.keyId] = key
            try save(updated)
            keys = updated
        }
    }

    /// Creates a key the way the developer portal does: a new P-256 key under a fresh key id.
    /// Only the public half is kept; the private half is returned once, as the PKCS#8 PEM of a `.p8` file.
    func createKey(teamId: String, topics: [String]) throws -> (key: APNsKey, privateKeyPEM: String) {
        let privateKey = P256.Signing.PrivateKey()
        return try keys.withLock { keys in
            var keyId: String
            repeat {
                keyId = String((0..<10).map { _ in Self.identifierAlphabet.randomElement()! })
            } while keys[keyId] != nil
            let key = APNsKey(keyId: keyId, teamId: teamId, topics: topics, publicKey: privateKey.publicKey)
            var updated = keys
            updated[keyId] = key
            try save(updated)
            keys = updated
            return (key, privateKey.pemRepresentation)
        }
    }

    private func save(_ keys: [String: APNsKey]) throws {
        let stored = try keys.values.sorted { $0.keyId < $1.keyId }.map {
            StoredKey(keyId: $0.keyId, teamId: $0.teamId, topics: $0.topics, publicKey: try $0.publicKey().pemRepresentation)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(stored).write(to: file, options: .atomic)
    }
}
