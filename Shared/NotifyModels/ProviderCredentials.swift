import Foundation

/// FCM HTTP v1 credentials: the service-account JSON Google lets you download.
public struct FCMCredentials: Codable, Sendable, Equatable {
    /// The fields of the service-account file this service uses (snake_case, as Google writes them).
    public struct ServiceAccount: Codable, Sendable, Equatable {
        public var projectId: String
        public var privateKeyId: String
        /// PKCS#8 PEM of the RSA key that signs the OAuth assertion (RS256).
        public var privateKey: String
        public var clientEmail: String
        public var tokenUri: String

        enum CodingKeys: String, CodingKey {
            case projectId = "project_id", privateKeyId = "private_key_id", privateKey = "private_key"
            case clientEmail = "client_email", tokenUri = "token_uri"
        }

        public init(projectId: String, privateKeyId: String, privateKey: String, clientEmail: String, tokenUri: String) {
            self.projectId = projectId
            self.privateKeyId = privateKeyId
            self.privateKey = privateKey
            self.clientEmail = clientEmail
            self.tokenUri = tokenUri
        }
    }

    public var serviceAccount: ServiceAccount
    /// Overrides https://fcm.googleapis.com, e.g. for the provider sandbox.
    public var endpoint: String?

    public init(serviceAccount: ServiceAccount, endpoint: String?) {
        self.serviceAccount = serviceAccount
        self.endpoint = endpoint
    }

    public var baseURL: String { endpoint ?? "https://fcm.googleapis.com" }

    public func validate() throws(ValidationError) {
        if serviceAccount.projectId.isEmpty { throw .missing("serviceAccount.project_id") }
        if serviceAccount.clientEmail.isEmpty { throw .missing("serviceAccount.client_email") }
        if !serviceAccount.tokenUri.hasPrefix("https://") { throw .invalid("serviceAccount.token_uri", "token_uri must be an https URL") }
        if !serviceAccount.privateKey.contains("PRIVATE KEY") { throw .invalid("serviceAccount.private_key", "private_key must be a PEM key") }
        if let endpoint, !endpoint.hasPrefix("https://") { throw .invalid("endpoint", "endpoint must be an https URL") }
    }
}

/// WNS credentials: the app's package SID and client secret (OAuth client credentials).
public struct WNSCredentials: Codable, Sendable, Equatable {
    public var packageSid: String
    public var clientSecret: String
    /// Overrides https://login.live.com/accesstoken.srf, e.g. for the provider sandbox.
    public var tokenURL: String?

    public init(packageSid: String, clientSecret: String, tokenURL: String?) {
        self.packageSid = packageSid
        self.clientSecret = clientSecret
        self.tokenURL = tokenURL
    }

    public var resolvedTokenURL: String { tokenURL ?? "https://login.live.com/accesstoken.srf" }

    public func validate() throws(ValidationError) {
        if packageSid.isEmpty { throw .missing("packageSid") }
        if clientSecret.isEmpty { throw .missing("clientSecret") }
        if let tokenURL, !tokenURL.hasPrefix("https://") { throw .invalid("tokenURL", "tokenURL must be an https URL") }
    }
}

/// Web Push (VAPID, RFC 8292) credentials: the application server's P-256 key pair and contact.
public struct WebPushCredentials: Codable, Sendable, Equatable {
    /// PKCS#8 PEM of the VAPID private key.
    public var vapidPrivateKey: String
    /// `mailto:` or `https:` contact the push services may use.
    public var subject: String

    public init(vapidPrivateKey: String, subject: String) {
        self.vapidPrivateKey = vapidPrivateKey
        self.subject = subject
    }

    public func validate() throws(ValidationError) {
        if !vapidPrivateKey.contains("PRIVATE KEY") { throw .invalid("vapidPrivateKey", "vapidPrivateKey must be a PEM P-256 key") }
        if !(subject.hasPrefix("mailto:") || subject.hasPrefix("https://")) {
            throw .invalid("subject", "subject must be a mailto: or https: URL")
        }
    }
}

/// One provider's credentials for an app (`PUT /v1/apps/{appId}/providers/{provider}`).
public enum ProviderCredentials: Sendable, Equatable {
    case apns(APNsCredentials)
    case fcm(FCMCredentials)
    case wns(WNSCredentials)
    case webpush(WebPushCredentials)

    public var platform: Platform {
        switch self {
        case .apns: return .apns
        case .fcm: return .fcm
        case .wns: return .wns
        case .webpush: return .webpush
        }
    }

    /// Decodes the body of a PUT for `platform`, naming the wrong field.
    public static func decode(_ platform: Platform, from data: Data, decoder: JSONDecoder) throws -> ProviderCredentials {
        switch platform {
        // PushKit tokens are reached with the app's APNs key: there are no VoIP credentials of their own.
        case .apns, .apnsVoip: return .apns(try decoder.decode(APNsCredentials.self, from: data))
        case .fcm: return .fcm(try decoder.decode(FCMCredentials.self, from: data))
        case .wns: return .wns(try decoder.decode(WNSCredentials.self, from: data))
        case .webpush: return .webpush(try decoder.decode(WebPushCredentials.self, from: data))
        case .polling: throw ValidationError.invalid("provider", "polling devices are not pushed: there are no credentials for them")
        }
    }

    public func validate() throws(ValidationError) {
        switch self {
        case .apns(let credentials): try credentials.validate()
        case .fcm(let credentials): try credentials.validate()
        case .wns(let credentials): try credentials.validate()
        case .webpush(let credentials): try credentials.validate()
        }
    }

    /// The stored JSON of the provider's own credentials.
    public func encoded(with encoder: JSONEncoder) throws -> Data {
        switch self {
        case .apns(let credentials): return try encoder.encode(credentials)
        case .fcm(let credentials): return try encoder.encode(credentials)
        case .wns(let credentials): return try encoder.encode(credentials)
        case .webpush(let credentials): return try encoder.encode(credentials)
        }
    }
}

extension ProviderCredentials: Codable {
    private enum CodingKeys: String, CodingKey {
        case provider, credentials
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Platform.self, forKey: .provider) {
        case .apns, .apnsVoip: self = .apns(try container.decode(APNsCredentials.self, forKey: .credentials))
        case .fcm: self = .fcm(try container.decode(FCMCredentials.self, forKey: .credentials))
        case .wns: self = .wns(try container.decode(WNSCredentials.self, forKey: .credentials))
        case .webpush: self = .webpush(try container.decode(WebPushCredentials.self, forKey: .credentials))
        case .polling:
            throw DecodingError.dataCorruptedError(forKey: .provider, in: container, debugDescription: "polling devices have no provider credentials")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(platform, forKey: .provider)
        switch self {
        case .apns(let credentials): try container.encode(credentials, forKey: .credentials)
        case .fcm(let credentials): try container.encode(credentials, forKey: .credentials)
        case .wns(let credentials): try container.encode(credentials, forKey: .credentials)
        case .webpush(let credentials): try container.encode(credentials, forKey: .credentials)
        }
    }
}
