import Foundation
import Hummingbird
import NotifyModels
import NotifyStore
import PostgresNIO

/// Applies a state change or deletion for a device or the app server: queues the command, waits until
/// storage applied it, and answers with the notification as it now is.
struct StateChanger: Sendable {
    let reader: any NotificationStore
    let visibility: WriteVisibility

    /// The current notification (for a user, a broadcast in its feed too); 404 if it is not the caller's (or is already
    /// deleted/expired).
    func activeNotification(appId: String, id: UUID, userId: String?) async throws -> NotificationView {
        let view: NotificationView?
        do {
            view = try await reader.notification(appId: appId, id: id, userId: userId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        guard let view, view.status == .active else {
            throw APIFailure(.notFound, code: "notification_not_found", message: "no active notification with id \(id)", field: "id")
        }
        return view
    }

    func change(
        appId: String, id: UUID, userId: String?, request: StateChangeRequest?, delete: Bool, origin: UUID?
    ) async throws -> Response {
        if let request {
            do {
                try request.validate()
            } catch {
                throw APIFailure(error)
            }
        }
        let current = try await activeNotification(appId: appId, id: id, userId: userId)
        if current.eventSource != nil && userId == nil {
            throw APIFailure(
                .conflict, code: "broadcast_state_is_per_user",
                message: "a broadcast is read, dismissed or deleted by each user in its own feed, not by the app server", field: "id")
        }
        let changesSomething = delete
            || (request?.readState.map { $0 != current.readState } ?? false)
            || (request?.userActionState.map { $0 != current.userActionState } ?? false)
        if !changesSomething {
            // Already so (e.g. a retried PATCH): no change, no push.
            return try JSONResponse.make(.ok, current)
        }
        let change = StorageCommand(action: .changeNotificationState(NotificationStateChange(
            appId: appId, userId: current.userId, notificationId: id, readState: request?.readState,
            userActionState: request?.userActionState, delete: delete, originSubscriptionId: origin, requestedAt: Date())))
        let applied = try await visibility.send(change) {
            try await reader.changeSequence(
                appId: appId, userId: current.userId, notificationId: id, broadcast: current.eventSource != nil, after: current.sequence)
        } != nil
        if delete { return Response(status: applied ? .noContent : .accepted) }
        guard applied, let updated = try? await reader.notification(appId: appId, id: id, userId: userId) else {
            return Response(status: .accepted)
        }
        return try JSONResponse.make(.ok, updated)
    }
}

/// Reads the reader options (status, readState, userActionState, groupName) and paging from the query string.
enum ReaderQuery {
    static func filter(_ request: Request) throws(APIFailure) -> NotificationFilter {
        NotificationFilter(
            status: try value(request, "status"), readState: try value(request, "readState"), userActionState: try value(request, "userActionState"),
            groupName: request.uri.queryParameters.get("groupName").map { String($0) })
    }

    static func limit(_ request: Request, default defaultLimit: Int, maximum: Int) throws(APIFailure) -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return defaultLimit }
        guard let limit = Int(text), (1...maximum).contains(limit) else {
            throw APIFailure(ValidationError.invalid("limit", "limit must be between 1 and \(maximum)"))
        }
        return limit
    }

    private static func value<Value: RawRepresentable & CaseIterable>(_ request: Request, _ name: String) throws(APIFailure) -> Value?
    where Value.RawValue == String {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let value = Value(rawValue: text) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIFailure(ValidationError.invalid(name, "\(name) must be one of: \(allowed)"))
        }
        return value
    }

    /// A time given as RFC 3339 (`2026-11-24T21:00:00Z`, fractions of a second allowed); nil when absent.
    static func timestamp(_ request: Request, _ name: String) throws(APIFailure) -> Date? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let date = WireCoding.parseTimestamp(String(text)) else {
            throw APIFailure(ValidationError.invalid(name, "\(name) must be an RFC 3339 time, e.g. 2026-11-24T21:00:00Z"))
        }
        return date
    }

    static func uuid(_ text: String, field: String) throws(APIFailure) -> UUID {
        guard let id = UUID(uuidString: text) else { throw APIFailure(ValidationError.invalid(field, "\(field) must be a UUID")) }
        return id
    }
}
