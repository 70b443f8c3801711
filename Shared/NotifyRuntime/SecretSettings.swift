import Foundation
import NotifyModels

extension EnvironmentVariable {
    public static let secretKeys = EnvironmentVariable(
        "NOTIFY_SECRET_KEYS",
        "key-encryption keys that seal stored secrets (provider credentials, client signing keys, webhook secrets), id:base64-of-32-bytes separated by commas, the first sealing (make one with `notifyctl secret-key`); this or NOTIFY_SECRET_KEYS_FILE is required")
    public static let secretKeysFile = EnvironmentVariable(
        "NOTIFY_SECRET_KEYS_FILE", "a file holding NOTIFY_SECRET_KEYS's entries, one per line (read instead of NOTIFY_SECRET_KEYS when set)")
}

extension ServiceEnvironment {
    /// The keyring from NOTIFY_SECRET_KEYS_FILE, else NOTIFY_SECRET_KEYS.
    public func secretKeyring() throws(ConfigurationError) -> SecretKeyring {
        let text: String
        let source: String
        if let path = string(.secretKeysFile) {
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigurationError("NOTIFY_SECRET_KEYS_FILE: \(path) cannot be read")
            }
            source = "NOTIFY_SECRET_KEYS_FILE (\(path))"
        } else if let keys = string(.secretKeys) {
            (text, source) = (keys, "NOTIFY_SECRET_KEYS")
        } else {
            throw ConfigurationError(
                "NOTIFY_SECRET_KEYS or NOTIFY_SECRET_KEYS_FILE is required: the keys that seal stored secrets (make one with `notifyctl secret-key`)")
        }
        do {
            return try SecretKeyring(parsing: text)
        } catch {
            throw ConfigurationError("\(source): \(error.message)")
        }
    }
}
