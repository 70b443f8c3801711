import Crypto
import Foundation
import _CryptoExtras

/// A Firebase service account as Google IAM knows it: its public key only.
struct FCMServiceAccount: Codable, Sendable {
    let clientEmail: String
    let projectId: String
    let privateKeyId: String
    /// The RSA public key, SubjectPublicKeyInfo PEM.
    let publicKey: String
}

/// A service account key file as the Google Cloud console downloads it (snake_case JSON).
struct FCMServiceAccountKeyFile: Encodable {
    let type = "service_account"
    let projectId: String
    let privateKeyId: String
    let privateKey: String
    let clientEmail: String
    let clientId: String
    let authUri = "https://accounts.google.com/o/oauth2/auth"
    let tokenUri: String
    let authProviderX509CertUrl = "https://www.googleapis.com/oauth2/v1/certs"
    let clientX509CertUrl: String
    let universeDomain = "googleapis.com"

    private enum CodingKeys: String, CodingKey {
        case type, projectId = "project_id", privateKeyId = "private_key_id", privateKey = "private_key"
        case clientEmail = "client_email", clientId = "client_id", authUri = "auth_uri", tokenUri = "token_uri"
        case authProviderX509CertUrl = "auth_provider_x509_cert_url", clientX509CertUrl = "client_x509_cert_url"
        case universeDomain = "universe_domain"
    }
}

/// The registered service accounts by client email, persisted as `fcm-service-accounts.json`.
final class FCMServiceAccounts: Sendable {
    private let table: PersistedTable<FCMServiceAccount>

    init(file: URL) throws {
        table = try PersistedTable(file: file)
    }

    func account(email: String) -> FCMServiceAccount? {
        table[email]
    }

    /// Whether `value` is a Google Cloud project id: 6 to 30 lowercase letters, digits or hyphens,
    /// starting with a letter and not ending with a hyphen.
    static func isProjectId(_ value: String) -> Bool {
        let allowed = value.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        return (6...30).contains(value.count) && allowed && value.first!.isLetter && value.last != "-"
    }

    /// Creates an account with a new RSA 2048 key, the way the console's "Generate new private key"
    /// does. Only the public half is kept; the key file with the private half is returned once.
    func create(projectId: String, tokenURI: String) throws -> FCMServiceAccountKeyFile {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let suffix = String(Base64URL.random(byteCount: 8).lowercased().filter(\.isLetter).prefix(5))
        let clientEmail = "firebase-adminsdk-\(suffix)@\(projectId).iam.gserviceaccount.com"
        let privateKeyId = SHA256.hash(data: privateKey.publicKey.derRepresentation)
            .prefix(20).map { String(format: "%02x", $0) }.joined()
        try table.set(
            FCMServiceAccount(
                clientEmail: clientEmail,
                projectId: projectId,
                privateKeyId: privateKeyId,
                publicKey: privateKey.publicKey.pemRepresentation
            ),
            id: clientEmail
        )
        let encodedEmail = clientEmail.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? clientEmail
        return FCMServiceAccountKeyFile(
            projectId: projectId,
            privateKeyId: privateKeyId,
            privateKey: privateKey.pkcs8PEMRepresentation + "\n",
            clientEmail: clientEmail,
            clientId: String((0..<21).map { _ in "0123456789".randomElement()! }),
            tokenUri: tokenURI,
            clientX509CertUrl: "https://www.googleapis.com/robot/v1/metadata/x509/\(encodedEmail)"
        )
    }
}
