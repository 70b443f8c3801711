import Foundation

/// What a run cost the broker and the database, per notification accepted: AMQP messages published and delivered
/// (and routed to each queue), PostgreSQL transactions committed and rolled back. Counted from before the first
/// publish to `settleSeconds` after the last push, so that the counters the broker and PostgreSQL report late are in.
struct PipelineTraffic: Codable, Sendable {
    struct QueueShare: Codable, Sendable {
        let queue: String
        let routed: Int
        let perNotification: Double
    }

    /// The counters at one moment; nil where they could not be read.
    struct Snapshot: Sendable {
        let broker: BrokerStats.Snapshot?
        let database: DatabaseStats.Counts?

        /// Reads both sources; one that fails is logged and left out.
        static func read(broker: BrokerStats?, database: DatabaseStats?) async -> Snapshot {
            var brokerSnapshot: BrokerStats.Snapshot?, counts: DatabaseStats.Counts?
            do { brokerSnapshot = try await broker?.snapshot() } catch { HTTPLoadCommand.log("reading RabbitMQ's counters failed: \(error)") }
            do { counts = try await database?.counts() } catch { HTTPLoadCommand.log("reading PostgreSQL's counters failed: \(error)") }
            return Snapshot(broker: brokerSnapshot, database: counts)
        }
    }

    let notifications: Int
    let settleSeconds: Int
    /// Messages clients published to the broker, and the broker delivered to consumers.
    let amqpPublished: Int?
    let amqpDelivered: Int?
    /// Messages routed to each queue, the most first (queues with none left out).
    let byQueue: [QueueShare]
    let databaseCommits: Int?
    let databaseRollbacks: Int?

    init(from before: Snapshot, to after: Snapshot, notifications: Int, settleSeconds: Int) {
        self.notifications = notifications
        self.settleSeconds = settleSeconds
        let units = Double(Swift.max(notifications, 1))
        if let start = before.broker, let end = after.broker {
            amqpPublished = end.published - start.published
            amqpDelivered = end.delivered - start.delivered
            byQueue = end.routed.compactMap { queue, routed in
                let count = routed - (start.routed[queue] ?? 0)
                return count > 0 ? QueueShare(queue: queue, routed: count, perNotification: Double(count) / units) : nil
            }.sorted { ($0.routed, $1.queue) > ($1.routed, $0.queue) }
        } else {
            (amqpPublished, amqpDelivered, byQueue) = (nil, nil, [])
        }
        if let start = before.database, let end = after.database {
            databaseCommits = end.commits - start.commits
            databaseRollbacks = end.rollbacks - start.rollbacks
        } else {
            (databaseCommits, databaseRollbacks) = (nil, nil)
        }
    }

    /// Markdown rows for the report.
    var rows: [(String, String)] {
        let units = Double(Swift.max(notifications, 1))
        func per(_ count: Int?) -> String { count.map { String(format: "%.2f (%d)", Double($0) / units, $0) } ?? "n/a" }
        var rows = [
            ("AMQP messages per notification: published / delivered", "\(per(amqpPublished)) / \(per(amqpDelivered))"),
            ("PostgreSQL transactions per notification: committed / rolled back", "\(per(databaseCommits)) / \(per(databaseRollbacks))"),
        ]
        if !byQueue.isEmpty {
            rows.append(("AMQP messages routed per notification, by queue", byQueue.prefix(8).map {
                "\($0.queue) " + String(format: "%.2f", $0.perNotification)
            }.joined(separator: ", ")))
        }
        return rows
    }
}
