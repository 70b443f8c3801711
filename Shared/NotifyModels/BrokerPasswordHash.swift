import Crypto
import Foundation

/// RabbitMQ's hash of a user's password, in its default form (`rabbit_password_hashing_sha256`): the base64 of a
/// 4-byte random salt followed by SHA-256(salt ++ the password's UTF-8). Ingest sends storage this hash of a new broker
/// user's password, never the password, and storage creates the user with it (the management API's `password_hash`):
/// the password is answered to the operator once and is in no message, table or broker definition in clear.
public enum BrokerPasswordHash {
    /// The hash of `password` with a random salt (or `salt`, four bytes).
    public static func sha256(of password: String, salt: [UInt8]? = nil) -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = salt ?? (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let digest = SHA256.hash(data: salt + Array(password.utf8))
        return Data(salt + Array(digest)).base64EncodedString()
    }
}
