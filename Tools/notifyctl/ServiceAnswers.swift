import Foundation
import NotifyModels

// The service's answers that NotifyAPI has no public type for, as notifyctl reads them for its human output (the schemas
// of Services/ingest/openapi.yaml; --json prints the answers whole).

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
