import Foundation
import NotifyModels

// The service's answers that NotifyAPI has no type for, as notifyctl reads them for its human output (the schemas
// of Services/ingest/openapi.yaml; --json prints the answers whole).

/// `POST /v1/apps`: the app and its secrets, answered once.
struct CreatedApp: Decodable {
    var appId: String
    var name: String
    var apiKey: String
    var clientSigningKey: String
    var badgeMode: BadgeMode
    var broker: BrokerCredentials?
}

/// `PATCH /v1/apps/{appId}`: the app's settings, as sent and as answered.
struct AppSettings: Codable {
    var badgeMode: BadgeMode?
    var rateLimit: RateLimit?
}

/// `POST /v1/apps/{appId}/broker-credentials`: the new broker user, and the ones it replaces.
struct RotatedBrokerCredentials: Decodable {
    struct Retiring: Decodable {
        var user: String
        var retiresAt: Date
    }

    var broker: BrokerCredentials
    var retiring: [Retiring]
}

/// `PUT /v1/apps/{appId}/providers/{provider}`: the credentials as stored, without their secrets.
struct StoredProvider: Decodable {
    var appId: String
    var provider: String
    var appPackage: String?
    var teamId: String?
    var keyId: String?
    var topic: String?
    var environment: String?
    var endpoint: String?
    var projectId: String?
    var clientEmail: String?
    var packageSid: String?
    var subject: String?
    /// Base64url: the browser's `applicationServerKey`.
    var vapidPublicKey: String?
}

/// `POST /v1/apps/{appId}/notifications`: `{"id"}` for one notification, `{"results"}` for a batch or recipients.
struct PublishAnswer: Decodable {
    /// One item of a batch or recipient list.
    struct ItemResult: Decodable {
        var index: Int
        var status: Int
        var id: String?
        var error: APIErrorBody.Detail?
    }

    var id: String?
    var results: [ItemResult]?
}

/// `GET /v1/apps/{appId}/event-sources`.
struct EventSourceList: Decodable {
    var eventSources: [EventSourceView]
}
