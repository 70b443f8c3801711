import Foundation
import NotifyAPI
import NotifyClient
import Synchronization

/// Hands out user tokens `token-1`, `token-2`, ... and counts how often the client asked.
final class TokenProvider: Sendable {
    private let calls = Mutex(0)

    /// How many tokens were asked for.
    var count: Int { calls.withLock { $0 } }

    func next() -> String {
        "token-\(calls.withLock { count in count += 1; return count })"
    }
}

/// What the tests give the client and the service answers with.
enum Fixture {
    static let appId = "app_test"

    /// A storage directory no other client uses (several clients may share one to stand for a relaunch).
    static func storage() -> URL {
        FileManager.default.temporaryDirectory.appending(path: "notify-client-unit-tests").appending(path: UUID().uuidString)
    }

    static func client(_ service: FakeService, storage: URL = storage(), tokens: TokenProvider = TokenProvider()) throws -> NotifyClient {
        try NotifyClient(
            configuration: .init(baseURL: FakeService.baseURL, appId: appId, storageDirectory: storage),
            tokenProvider: { tokens.next() }, transport: service)
    }

    /// A visual notification as the service shows it, created `sequence` seconds after 15 January 2027 (unless `created` says
    /// otherwise) and expiring a day later.
    static func notification(
        _ id: UUID = UUID(), sequence: Int64, title: String = "Your order shipped", readState: ReadState = .unread,
        userActionState: UserActionState = .noInteraction, status: NotificationStatus = .active, created: Date? = nil,
        displayTimeToLive: Int? = nil
    ) -> NotificationView {
        let created = created ?? Date(timeIntervalSince1970: 1_800_000_000 + Double(sequence))
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: created.addingTimeInterval(86_400),
            displayTimeToLive: displayTimeToLive, platformTypes: nil,
            payload: NotificationPayload(visualContent: VisualContent(title: title, body: "test")), push: nil)
        return NotificationView(
            id: id, userId: "alice", content: content, readState: readState, userActionState: userActionState, status: status,
            sequence: sequence, createdDateTime: created, lastModifiedDateTime: created)
    }

    /// A change of the user's notifications, at the notification's sequence.
    static func change(_ kind: ChangeKind, _ notification: NotificationView) -> NotificationChange {
        NotificationChange(sequence: notification.sequence, kind: kind, changedDateTime: notification.lastModifiedDateTime, notification: notification)
    }

    /// A page of changes whose cursor stands at `sequence`.
    static func page(_ changes: [NotificationChange], through sequence: Int64, hasMore: Bool = false) -> ChangePage {
        ChangePage(changes: changes, cursor: SyncCursor.encode(SyncPosition(sequence: sequence)), hasMore: hasMore)
    }

    /// The service's answer to a registration.
    struct Registered: Encodable {
        var subscriptionId: UUID
        var expirationDateTime: Date
    }
}
