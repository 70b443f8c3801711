import Foundation
import NotifyDatabase
import NotifyModels

/// Opaque page tokens: the position of the last item shown, its fields joined by dots, in base64url, so a token goes
/// into a query string as it is (a `+` of plain base64 would be read as a space). Times are whole microseconds, as
/// stored, and bound back exactly (`PostgresTimestamp`).
public enum PageToken {
    /// History: the creation time and id of the last notification shown.
    public static func encode(createdAt: Date, id: UUID) -> String {
        encode([String(PostgresTimestamp(createdAt).microsecondsSince1970), id.uuidString])
    }

    public static func decode(_ token: String) throws(NotifyStoreError) -> (PostgresTimestamp, UUID) {
        let fields = try fields(of: token, count: 2)
        guard let micros = Int64(fields[0]), let id = UUID(uuidString: String(fields[1])) else { throw invalid }
        return (PostgresTimestamp(microsecondsSince1970: micros), id)
    }

    /// A delivery log: the time, push, attempt and result of the last outcome shown.
    public static func encode(_ position: DeliveryPosition) -> String {
        encode([String(position.at.microsecondsSince1970), position.pushId.uuidString, String(position.attempt), position.result])
    }

    public static func decode(deliveryPosition token: String) throws(NotifyStoreError) -> DeliveryPosition {
        let fields = try fields(of: token, count: 4)
        guard let micros = Int64(fields[0]), let pushId = UUID(uuidString: String(fields[1])), let attempt = Int32(fields[2]) else { throw invalid }
        return DeliveryPosition(at: PostgresTimestamp(microsecondsSince1970: micros), pushId: pushId, attempt: attempt, result: String(fields[3]))
    }

    private static func encode(_ fields: [String]) -> String {
        Base64URLCoding.encode(Data(fields.joined(separator: ".").utf8))
    }

    private static func fields(of token: String, count: Int) throws(NotifyStoreError) -> [Substring] {
        guard let data = Base64URLCoding.decode(token), let text = String(data: data, encoding: .utf8) else { throw invalid }
        let fields = text.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == count else { throw invalid }
        return fields
    }

    private static var invalid: NotifyStoreError { .invalidPageToken }
}

/// Where a delivery log page ends: the log is ordered by these, and an outcome logged twice (its feedback message
/// delivered again) is listed once.
public struct DeliveryPosition: Sendable, Equatable {
    public var at: PostgresTimestamp
    public var pushId: UUID
    public var attempt: Int32
    public var result: String

    public init(at: PostgresTimestamp, pushId: UUID, attempt: Int32, result: String) {
        self.at = at
        self.pushId = pushId
        self.attempt = attempt
        self.result = result
    }
}

