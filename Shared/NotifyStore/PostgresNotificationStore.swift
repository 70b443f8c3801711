import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Reads notifications, history pages and change pages from the shared tables (through the read-only role, on the
/// primary or a standby).
public struct PostgresNotificationStore: NotificationStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    private static let columns = """
        n.notification_id, n.user_id, n.content::text, n.read_state, n.user_action_state, n.status, n.sequence, n.created_at, n.updated_at,
        NULL::text
        """

    /// A broadcast `b` as the user bound to `user` sees it, with the user's state row `t` (`withState`) joined.
    private static func broadcastColumns(user: String) -> String {
        """
        b.notification_id, \(user)::text, b.content::text, coalesce(t.read_state, 'unread'), coalesce(t.user_action_state, 'noInteraction'),
        CASE WHEN t.status = 'deleted' THEN 'deleted' WHEN b.expires_at <= now() THEN 'expired' ELSE 'active' END,
        coalesce(t.sequence, 0), b.created_at, coalesce(t.updated_at, b.updated_at), b.event_source
        """
    }

    private static func withState(user: String) -> String {
        "LEFT JOIN broadcast_states t ON t.app_id = b.app_id AND t.user_id = \(user) AND t.notification_id = b.notification_id"
    }

    /// A notification of the app by id: one sent to a user, or a broadcast. Given `userId`, a broadcast is found only in
    /// that user's feed, with the user's state of it; without, it is the broadcast as published (`userId` empty).
    public func notification(appId: String, id: UUID, userId: String?) async throws -> NotificationView? {
        var bindings = try binds(appId, id)
        bindings.append(userId)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                SELECT \(Self.columns) FROM notifications n WHERE n.app_id = $1 AND n.notification_id = $2 AND ($3::text IS NULL OR n.user_id = $3)
                UNION ALL
                SELECT \(Self.broadcastColumns(user: "coalesce($3, '')"))
                FROM broadcasts b \(Self.withState(user: "$3"))
                WHERE b.app_id = $1 AND b.notification_id = $2
                  AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM user_broadcasts($1, $3) u WHERE u.notification_id = b.notification_id))
                """,
                binds: bindings), logger: logger)
        for try await row in rows.decode(Row.self) { return try Self.view(row) }
        return nil
    }

    /// Changes after `position`, oldest first: the user's changes (to its notifications and to its state of broadcasts),
    /// then, once those are all listed, the broadcasts published or replaced in the user's feed since the position's
    /// broadcast. Every change is listed (with the notification as it is now), so a reader that follows the cursor sees
    /// each committed change exactly once: both orders are numbered by a counter row locked until commit.
    public func changes(appId: String, userId: String, after position: SyncPosition, limit: Int, filter: NotificationFilter) async throws -> ChangePage {
        try await ensureRetained(appId: appId, userId: userId, after: position.sequence)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                SELECT c.sequence, c.kind, c.changed_at, \(Self.columns)
                FROM changes c JOIN notifications n ON n.notification_id = c.notification_id
                WHERE c.app_id = $1 AND c.user_id = $2 AND c.sequence > $3
                UNION ALL
                SELECT c.sequence, c.kind, c.changed_at, \(Self.broadcastColumns(user: "$2"))
                FROM changes c JOIN broadcasts b ON b.notification_id = c.notification_id \(Self.withState(user: "$2"))
                WHERE c.app_id = $1 AND c.user_id = $2 AND c.sequence > $3
                ORDER BY 1 LIMIT $4
                """,
                binds: try binds(appId, userId, position.sequence, limit + 1)),
            logger: logger)
        var changes: [NotificationChange] = []
        var reached = position
        var scanned = 0
        for try await (changeSequence, kind, changedAt, n0, n1, n2, n3, n4, n5, n6, n7, n8, n9) in rows.decode(
            (Int64, String, Date, UUID, String, String, String, String, String, Int64, Date, Date, String?).self)
        {
            scanned += 1
            if scanned > limit { break }
            reached.sequence = changeSequence
            let view = try Self.view((n0, n1, n2, n3, n4, n5, n6, n7, n8, n9))
            Self.append(NotificationChange(
                sequence: changeSequence, kind: ChangeKind(rawValue: kind) ?? .updated, changedDateTime: changedAt, notification: view),
                to: &changes, filter: filter)
        }
        guard scanned <= limit else { return ChangePage(changes: changes, cursor: SyncCursor.encode(reached), hasMore: true) }
        let room = limit - scanned
        let broadcasts = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                SELECT b.seq, \(Self.broadcastColumns(user: "$2"))
                FROM user_broadcasts($1, $2) b \(Self.withState(user: "$2"))
                WHERE b.seq > $3 ORDER BY b.seq LIMIT $4
                """,
                binds: try binds(appId, userId, position.broadcastSequence, room + 1)),
            logger: logger)
        var listed = 0
        for try await (seq, n0, n1, n2, n3, n4, n5, n6, n7, n8, n9) in broadcasts.decode(
            (Int64, UUID, String, String, String, String, String, Int64, Date, Date, String?).self)
        {
            listed += 1
            if listed > room { break }
            reached.broadcastSequence = seq
            let view = try Self.view((n0, n1, n2, n3, n4, n5, n6, n7, n8, n9))
            let kind: ChangeKind = switch view.status {
            case .deleted: .deleted
            case .expired: .expired
            case .active: view.createdDateTime == view.lastModifiedDateTime ? .created : .updated
            }
            Self.append(NotificationChange(
                sequence: reached.sequence, broadcastSequence: seq, kind: kind, changedDateTime: view.lastModifiedDateTime, notification: view),
                to: &changes, filter: filter)
        }
        return ChangePage(changes: changes, cursor: SyncCursor.encode(reached), hasMore: listed > room)
    }

    private static func append(_ change: NotificationChange, to changes: inout [NotificationChange], filter: NotificationFilter) {
        if filter.admits(change) { changes.append(change) }
    }

    public func ensureRetained(appId: String, userId: String, after sequence: Int64) async throws {
        guard sequence > 0 else { return }
        let purged = try await client.query(
            "SELECT purged_through FROM user_sequences WHERE app_id = \(appId) AND user_id = \(userId)", logger: logger)
        for try await through in purged.decode(Int64.self) where sequence < through { throw NotifyStoreError.cursorExpired }
    }

    /// Notifications of one status (active by default), newest first, with stable keyset paging: those sent to the user
    /// and the broadcasts in the user's feed, with the user's state of each.
    public func history(appId: String, userId: String, filter: NotificationFilter, limit: Int, pageToken: String?) async throws -> HistoryPage {
        var bindings = try binds(appId, userId, (filter.status ?? .active).rawValue)
        // The conditions on the union's columns reach into both of its parts (and the notifications' index).
        var sql = """
            SELECT notification_id, user_id, content, read_state, user_action_state, status, sequence, created_at, updated_at, event_source
            FROM (
                SELECT \(Self.columns) AS event_source, n.expires_at FROM notifications n WHERE n.app_id = $1 AND n.user_id = $2
                UNION ALL
                SELECT \(Self.broadcastColumns(user: "$2")), b.expires_at FROM user_broadcasts($1, $2) b \(Self.withState(user: "$2"))
            ) AS feed(notification_id, user_id, content, read_state, user_action_state, status, sequence, created_at, updated_at,
                      event_source, expires_at)
            WHERE status = $3
            """
        if filter.status == nil || filter.status == .active {
            sql += " AND expires_at > now()"
        }
        if let readState = filter.readState {
            bindings.append(readState.rawValue)
            sql += " AND read_state = $\(bindings.count)"
        }
        if let actionState = filter.userActionState {
            bindings.append(actionState.rawValue)
            sql += " AND user_action_state = $\(bindings.count)"
        }
        if let groupName = filter.groupName {
            bindings.append(groupName)
            sql += " AND content::jsonb ->> 'groupName' = $\(bindings.count)"
        }
        if let pageToken {
            let (createdAt, id) = try PageToken.decode(pageToken)
            bindings.append(createdAt)
            bindings.append(id)
            sql += " AND (created_at, notification_id) < ($\(bindings.count - 1), $\(bindings.count))"
        }
        bindings.append(limit + 1)
        sql += " ORDER BY created_at DESC, notification_id DESC LIMIT $\(bindings.count)"
        var views: [NotificationView] = []
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).decode(Row.self) {
            views.append(try Self.view(row))
        }
        var next: String?
        if views.count > limit {
            views.removeLast()
            if let last = views.last { next = PageToken.encode(createdAt: last.createdDateTime, id: last.id) }
        }
        return HistoryPage(notifications: views, nextPageToken: next)
    }

    public func changeSequence(appId: String, userId: String, notificationId id: UUID, broadcast: Bool, after sequence: Int64) async throws -> Int64? {
        let query: PostgresQuery = broadcast
            ? """
              SELECT sequence FROM broadcast_states
              WHERE app_id = \(appId) AND user_id = \(userId) AND notification_id = \(id) AND sequence > \(sequence)
              """
            : "SELECT sequence FROM notifications WHERE notification_id = \(id) AND user_id = \(userId) AND sequence > \(sequence)"
        for try await found in try await client.query(query, logger: logger).decode(Int64.self) { return found }
        return nil
    }

    // MARK: Rows

    private typealias Row = (UUID, String, String, String, String, String, Int64, Date, Date, String?)

    /// One decoder for every row (a page of changes decodes up to a thousand contents).
    private static let contentDecoder = WireCoding.makeDecoder()

    private static func view(_ row: Row) throws -> NotificationView {
        let content = try Self.contentDecoder.decode(NotificationContent.self, from: Data(row.2.utf8))
        return NotificationView(
            id: row.0, userId: row.1, content: content,
            readState: ReadState(rawValue: row.3) ?? .unread, userActionState: UserActionState(rawValue: row.4) ?? .noInteraction,
            status: NotificationStatus(rawValue: row.5) ?? .active, sequence: row.6, createdDateTime: row.7, lastModifiedDateTime: row.8,
            eventSource: row.9)
    }

    private func binds(_ values: any PostgresEncodable...) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        for value in values { try bindings.append(value) }
        return bindings
    }
}

