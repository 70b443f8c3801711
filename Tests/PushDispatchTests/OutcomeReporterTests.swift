import Foundation
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Testing

@testable import PushDispatchCore

/// Push outcomes gathered into feedback messages: by time, by the deliveries waiting for them, and by size.
@Suite("Outcome reporter", .timeLimit(.minutes(1)))
struct OutcomeReporterTests {
    let publisher = RecordingPublisher()

    func outcomes(_ count: Int) -> [PushOutcome] {
        (0..<count).map { _ in
            PushOutcome(
                pushId: UUID(), appId: "app_test", subscriptionId: UUID(), notificationId: UUID(), sequence: 1, platform: .fcm,
                result: .accepted, status: 200, reason: nil, attempt: 0, invalidSince: nil, at: Date())
        }
    }

    /// The outcomes of each feedback message published, in order.
    func feedback() throws -> [[PushOutcome]] {
        try publisher.all.map { message in
            #expect(message.routingKey == QueueNames.pushFeedback)
            return try message.read(as: PushOutcomeBatch.self).outcomes
        }
    }

    @Test("outcomes of batches handled meanwhile go out as one message, once as many deliveries as allowed wait for it")
    func groupedByDeliveries() async throws {
        let reporter = OutcomeReporter(publisher: publisher, interval: .seconds(3600), maximumDeliveries: 3, logger: quietLogger)
        let batches = [outcomes(2), outcomes(1), outcomes(4)]
        let confirmed = await withTaskGroup(of: Bool.self, returning: [Bool].self) { group in
            for batch in batches { group.addTask { await reporter.report(batch, deliveries: 1) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(confirmed == [true, true, true])
        let messages = try feedback()
        #expect(messages.count == 1)
        #expect(Set(messages.flatMap { $0 }.map(\.pushId)) == Set(batches.flatMap { $0 }.map(\.pushId)))
    }

    @Test("once the interval passed, what gathered goes out, however little")
    func groupedByInterval() async throws {
        let reporter = OutcomeReporter(publisher: publisher, interval: .milliseconds(20), maximumDeliveries: 100, logger: quietLogger)
        let batch = outcomes(1)
        #expect(await reporter.report(batch, deliveries: 1))
        #expect(try feedback().map { $0.map(\.pushId) } == [batch.map(\.pushId)])
    }

    @Test("a group as large as a message may be goes out without waiting for the interval")
    func groupedBySize() async throws {
        let reporter = OutcomeReporter(publisher: publisher, interval: .seconds(3600), maximumDeliveries: 100, logger: quietLogger)
        #expect(await reporter.report(outcomes(OutcomeReporter.maximumOutcomes), deliveries: 1))
        #expect(try feedback().map(\.count) == [OutcomeReporter.maximumOutcomes])
    }

    @Test("outcomes reported after a group went out start the next group")
    func nextGroup() async throws {
        let reporter = OutcomeReporter(publisher: publisher, interval: .seconds(3600), maximumDeliveries: 1, logger: quietLogger)
        let first = outcomes(1)
        let second = outcomes(2)
        #expect(await reporter.report(first, deliveries: 1))
        #expect(await reporter.report(second, deliveries: 1))
        #expect(try feedback().map { $0.map(\.pushId) } == [first.map(\.pushId), second.map(\.pushId)])
    }
}
