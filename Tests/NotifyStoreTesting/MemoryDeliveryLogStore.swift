import Foundation
import NotifyDatabase
import NotifyModels
import NotifyStore
import Synchronization

/// A `DeliveryLogStore` held in memory: tests `record` outcomes as storage would have logged them.
public final class MemoryDeliveryLogStore: DeliveryLogStore {
    private let records = Mutex<[(appId: String, record: DeliveryRecord)]>([])

    public init() {}

    /// Logs one outcome of the app's push.
    public func record(_ record: DeliveryRecord, appId: String) {
        records.withLock { $0.append((appId, record)) }
    }

    public func deliveries(appId: String, notificationId: UUID?, since: Date?, limit: Int, pageToken: String?) async throws -> DeliveryPage {
        let after = try pageToken.map { try PageToken.decode(deliveryPosition: $0) }
        var log = records.withLock { $0 }.filter { entry in
            entry.appId == appId && (notificationId == nil || entry.record.notificationId == notificationId)
                && (since == nil || entry.record.at >= since!)
        }.map { ($0.record, Self.position(of: $0.record)) }
        log.sort { Self.precedes($0.1, $1.1) }
        if let after { log = log.filter { Self.precedes(after, $0.1) } }
        // An outcome logged twice is listed once.
        var unique: [(DeliveryRecord, DeliveryPosition)] = []
        for entry in log where unique.last?.1 != entry.1 { unique.append(entry) }
        let page = unique.prefix(limit)
        return DeliveryPage(deliveries: page.map(\.0), nextPageToken: unique.count > limit ? page.last.map { PageToken.encode($0.1) } : nil)
    }

    public func deliverySummary(appId: String, notificationId: UUID) async throws -> DeliverySummary {
        let log = records.withLock { $0 }.filter { $0.appId == appId && $0.record.notificationId == notificationId }.map(\.record)
        var latest: [UUID: DeliveryRecord] = [:]
        for record in log {
            if let known = latest[record.pushId], (known.attempt, known.at) >= (record.attempt, record.at) { continue }
            latest[record.pushId] = record
        }
        var summary = DeliverySummary(notificationId: notificationId, pushes: 0, byProvider: [:], byResult: [:])
        for record in latest.values {
            summary.pushes += 1
            summary.byProvider[record.platform, default: [:]][record.result, default: 0] += 1
            summary.byResult[record.result, default: 0] += 1
        }
        return summary
    }

    private static func position(of record: DeliveryRecord) -> DeliveryPosition {
        DeliveryPosition(at: PostgresTimestamp(record.at), pushId: record.pushId, attempt: Int32(record.attempt), result: record.result)
    }

    private static func precedes(_ a: DeliveryPosition, _ b: DeliveryPosition) -> Bool {
        (a.at.microsecondsSince1970, a.pushId.uuidString, a.attempt, a.result) < (b.at.microsecondsSince1970, b.pushId.uuidString, b.attempt, b.result)
    }
}
