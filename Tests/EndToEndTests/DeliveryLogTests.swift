import Foundation
import NotifyAMQP
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("delivery log")
    struct DeliveryLogTests {
        @Test("a feedback message delivered twice is logged once; each notification lists its own outcomes, a retry adds an entry")
        func redeliveredFeedbackIsLoggedOnce() async throws {
            let app = try await TestApp.create()
            let first = UUID(), second = UUID()
            let devices = [UUID(), UUID(), UUID()]
            let at = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
            func outcome(_ notification: UUID, _ device: UUID, _ result: PushOutcome.Result, attempt: Int, status: Int?, reason: String?) -> PushOutcome {
                PushOutcome(
                    pushId: DeterministicID.pushID(notificationId: notification, sequence: 1, subscriptionId: device), appId: app.appId,
                    subscriptionId: device, notificationId: notification, sequence: 1, platform: .apns, result: result,
                    status: status, reason: reason, attempt: attempt, invalidSince: nil, at: at.addingTimeInterval(Double(attempt)))
            }
            let message = PushOutcomeBatch(outcomes: [
                outcome(first, devices[0], .accepted, attempt: 0, status: 200, reason: nil),
                outcome(second, devices[0], .accepted, attempt: 0, status: 200, reason: nil),
                outcome(first, devices[1], .retrying, attempt: 0, status: 503, reason: "ServiceUnavailable"),
                outcome(first, devices[2], .accepted, attempt: 0, status: 200, reason: nil),
            ])
            let retry = PushOutcomeBatch(outcomes: [outcome(first, devices[1], .accepted, attempt: 1, status: 200, reason: nil)])
            try await Broker.withPublisher(try Broker.configuration()) { publisher in
                for batch in [message, message, retry] {
                    try await publisher.publish(AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, body: try WireCoding.makeEncoder().encode(batch)))
                }
            }

            _ = try await app.deliveryLog(of: first.uuidString.lowercased()) { $0.count >= 4 }
            let expected = [
                "\(devices[0]) 0 accepted 200 -", "\(devices[1]) 0 retrying 503 ServiceUnavailable", "\(devices[2]) 0 accepted 200 -",
                "\(devices[1]) 1 accepted 200 -",
            ]
            func describe(_ entry: DeliveryLogEntry) -> String {
                "\(entry.subscriptionId.uppercased()) \(entry.attempt) \(entry.result) \(entry.status.map(String.init) ?? "-") \(entry.reason ?? "-")"
            }
            // Settled: the duplicate message is consumed by now (it was published before the retry, which is in).
            try await Task.sleep(for: .seconds(1))
            let settled = try await app.deliveryLog(of: first.uuidString.lowercased()) { _ in true }
            #expect(Set(settled.map(describe)) == Set(expected), "the first notification's log: \(settled.map(describe))")
            #expect(settled.count == 4, "entries, duplicates included: \(settled.map(describe))")
            #expect(settled.last.map(describe) == expected.last, "oldest first: the retry comes last")
            let secondLog = try await app.deliveryLog(of: second.uuidString.lowercased()) { !$0.isEmpty }
            #expect(secondLog.map(describe) == ["\(devices[0]) 0 accepted 200 -"], "the second notification's log")
        }

        @Test("a broadcast-sized record (600 outcomes in one row) is stored lz4-compressed and reads back whole")
        func largeRecordIsCompressedWithLZ4() async throws {
            let app = try await TestApp.create()
            let notification = UUID()
            let at = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
            let devices = (0..<600).map { _ in UUID() }
            let batch = PushOutcomeBatch(outcomes: devices.map { device in
                PushOutcome(
                    pushId: DeterministicID.pushID(notificationId: notification, sequence: 0, subscriptionId: device), appId: app.appId,
                    subscriptionId: device, notificationId: notification, sequence: 0, platform: .apns, result: .accepted,
                    status: 200, reason: nil, attempt: 0, invalidSince: nil, at: at)
            })
            try await Broker.withPublisher(try Broker.configuration()) { publisher in
                try await publisher.publish(AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, body: batch.encodedJSON()))
            }

            let log = try await app.deliveryLog(of: notification.uuidString.lowercased()) { $0.count >= devices.count }
            #expect(Set(log.map { $0.subscriptionId.uppercased() }) == Set(devices.map(\.uuidString)))
            #expect(log.allSatisfy { $0.result == "accepted" && $0.status == 200 })
            let compression = try await Database.withClient { client in
                let rows = try await client.query(
                    "SELECT pg_column_compression(results) FROM delivery_records WHERE notification_id = \(notification)", logger: testLogger)
                var methods: [String?] = []
                for try await method in rows.decode(String?.self) { methods.append(method) }
                return methods
            }
            #expect(compression == ["lz4"])
        }
    }
}
