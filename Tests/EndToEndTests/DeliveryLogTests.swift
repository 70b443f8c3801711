import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
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
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                for batch in [message, message, retry] {
                    try await publisher.publish(AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, wire: batch))
                }
            }

            _ = try await app.deliveryLog(of: first.uuidString.lowercased()) { $0.count >= 4 }
            let expected = [
                "\(devices[0].lowercasedString) 0 accepted 200 -", "\(devices[1].lowercasedString) 0 retrying 503 ServiceUnavailable",
                "\(devices[2].lowercasedString) 0 accepted 200 -", "\(devices[1].lowercasedString) 1 accepted 200 -",
            ]
            func describe(_ entry: DeliveryLogEntry) -> String {
                "\(entry.subscriptionId) \(entry.attempt) \(entry.result) \(entry.status.map(String.init) ?? "-") \(entry.reason ?? "-")"
            }
            // Settled: the duplicate message is consumed by now (it was published before the retry, which is in).
            try await Task.sleep(for: .seconds(1))
            let settled = try await app.deliveryLog(of: first.uuidString.lowercased()) { _ in true }
            #expect(Set(settled.map(describe)) == Set(expected), "the first notification's log: \(settled.map(describe))")
            #expect(settled.count == 4, "entries, duplicates included: \(settled.map(describe))")
            #expect(settled.last.map(describe) == expected.last, "oldest first: the retry comes last")
            let secondLog = try await app.deliveryLog(of: second.uuidString.lowercased()) { !$0.isEmpty }
            #expect(secondLog.map(describe) == ["\(devices[0].lowercasedString) 0 accepted 200 -"], "the second notification's log")
            // Read a page at a time, across the two rows of the log (the message and the retry), the log is the same.
            for limit in [1, 3] {
                let paged = try await app.deliveryLogPages(of: first.uuidString.lowercased(), limit: limit)
                #expect(paged.map(describe) == settled.map(describe), "pages of \(limit)")
            }
        }

        @Test("a broadcast-sized record (600 outcomes in one row) is stored lz4-compressed and reads back whole, also a page at a time")
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
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, wire: batch))
            }

            let log = try await app.deliveryLog(of: notification.uuidString.lowercased()) { $0.count >= devices.count }
            #expect(Set(log.map(\.subscriptionId)) == Set(devices.map(\.lowercasedString)))
            #expect(log.allSatisfy { $0.result == "accepted" && $0.status == 200 })
            // Pages of 250 (the outcomes share one time, so pages end between pushes of that time): each outcome once.
            let paged = try await app.deliveryLogPages(of: notification.uuidString.lowercased(), limit: 250)
            #expect(paged.count == devices.count)
            #expect(Set(paged.map(\.subscriptionId)) == Set(devices.map(\.lowercasedString)))
            let path = "\(Stack.ingestURL)/v1/apps/\(app.appId)/notifications/\(notification)/deliveries"
            expectAPIError(try await StackClient.send(.GET, path + "?limit=0", bearer: app.apiKey), status: 400, field: "limit", "limit=0")
            expectAPIError(try await StackClient.send(.GET, path + "?pageToken=nope", bearer: app.apiKey), status: 400, field: "pageToken", "pageToken=nope")
            let compression = try await Database.inspecting { try await $0.resultsCompression(notificationId: notification) }
            #expect(compression == ["lz4"])
        }
    }
}

extension EndToEndTests {
    @Suite("push outcomes reported in groups", .serialized)
    struct OutcomeGroupingTests {
        /// Messages of `queue` a service's consumer acked so far (`notify_amqp_messages_total`).
        private func acked(_ queue: String, by service: Metrics.Service) async throws -> Double {
            try await Metrics.value("notify_amqp_messages_total", labels: ["queue": queue, "disposition": "ack"], service: service)
        }

        @Test("pushes sent one after another have their outcomes logged, carried to storage in fewer feedback messages than pushes")
        func outcomesShareFeedbackMessages() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)
            let feedbackBefore = try await acked(QueueNames.pushFeedback, by: .storage)
            var ids: [String] = []
            for index in 0..<6 {
                let id = try await app.publishAccepted(.alert(to: user, title: "grouped \(index)"))
                // At the device before the next is published: each push is a push-job message and a batch of its own.
                #expect(try await Sandbox.missingNotifications([id], at: device.pushToken).isEmpty, "push \(index) never arrived")
                ids.append(id)
            }
            for id in ids {
                #expect(try await app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["accepted"], "the log of \(id)")
            }
            let feedbackMessages = try await acked(QueueNames.pushFeedback, by: .storage) - feedbackBefore
            #expect(feedbackMessages >= 1 && feedbackMessages < Double(ids.count), "\(feedbackMessages) feedback messages for \(ids.count) pushes")
        }

        @Test("push-dispatch SIGKILLed while outcomes wait to be reported: the pushes are sent again and every outcome is logged")
        func killedWhileOutcomesWait() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerSubscribedDevice(of: user)
                var ids: [String] = []
                for index in 0..<3 {
                    ids.append(try await app.publishAccepted(.alert(to: user, title: "unreported \(index)")))
                }
                #expect(try await Sandbox.missingNotifications(Set(ids), at: device.pushToken).isEmpty)
                // Within the feedback interval of the last push: its outcome is not reported yet, its job not acked.
                try await Services.control("kill", ["push-dispatch"])
                try await Services.control("start", ["push-dispatch"])
                // Unacked, the jobs came back: at least one push reaches the device a second time (same push id).
                let deliveries = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count > ids.count }
                #expect(deliveries.count > ids.count, "no push was sent again: the jobs were acked before their outcomes were reported")
                for id in ids {
                    #expect(try await app.deliveryLog(of: id) { !$0.isEmpty }.contains { $0.result == "accepted" }, "no outcome logged for \(id)")
                }
            }
        }
    }
}
