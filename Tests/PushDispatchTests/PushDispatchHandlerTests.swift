import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Synchronization
import Testing

@testable import PushDispatchCore

/// What push-dispatch does with a provider's answers: the dispositions of the push-job messages, the retries and dead
/// letters it publishes, and the outcomes it reports to storage.
@Suite("Push dispatch handler", .timeLimit(.minutes(1)))
struct PushDispatchHandlerTests {
    /// A provider that answers each job with the verdict `answer` gives it, and keeps the jobs it was handed.
    final class ScriptedProvider: PushProvider {
        let platform = Platform.fcm
        private let answer: @Sendable (PushJob) -> PushVerdict
        private let handed = Mutex<[PushJob]>([])

        init(_ answer: @escaping @Sendable (PushJob) -> PushVerdict) { self.answer = answer }

        /// Every job sent, in the order handed over.
        var sent: [PushJob] { handed.withLock { $0 } }

        func deliver(_ jobs: [PushJob], concurrency _: Int) async -> [PushAttempt] {
            handed.withLock { $0 += jobs }
            return jobs.map { PushAttempt(verdict: answer($0), answerTime: .milliseconds(5)) }
        }
    }

    /// The devices that synced (by subscription): their visual fallbacks are not needed.
    struct SyncedDevices: VisualFallbackCheck {
        var synced: Set<UUID> = []

        func unneeded(_ jobs: [PushJob]) async throws -> Set<UUID> {
            Set(jobs.filter { synced.contains($0.subscriptionId) }.map(\.pushId))
        }
    }

    /// A provider that holds each job of the device token `slow` until `release()`; answers the others at once.
    final class GatedProvider: PushProvider {
        let platform = Platform.fcm
        private let handed = Mutex<[PushJob]>([])
        private let released = Mutex(false)

        var sent: [PushJob] { handed.withLock { $0 } }

        func release() { released.withLock { $0 = true } }

        func deliver(_ jobs: [PushJob], concurrency _: Int) async -> [PushAttempt] {
            handed.withLock { $0 += jobs }
            if jobs.contains(where: { $0.deviceToken == "slow" }) {
                while !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            }
            return jobs.map { _ in PushAttempt(verdict: PushVerdict(action: .accepted, status: 200, reason: nil), answerTime: .seconds(2)) }
        }
    }

    /// A database that cannot be reached: every check fails, and is counted.
    final class UnreachableDatabase: VisualFallbackCheck {
        private let checks = Mutex(0)

        var attempts: Int { checks.withLock { $0 } }

        func unneeded(_ jobs: [PushJob]) async throws -> Set<UUID> {
            checks.withLock { $0 += 1 }
            throw AMQPError(code: .connectionFailed, message: "the database is down")
        }
    }

    static let queue = QueueNames.pushQueue(.fcm, lane: .interactive)
    static let retryPolicy = RetryPolicy(delaysMilliseconds: [1_000, 5_000, 25_000])

    let publisher = RecordingPublisher()

    /// A handler on `provider` publishing to `publisher` (this suite's unless given).
    func handler(
        _ provider: any PushProvider, publisher: RecordingPublisher? = nil, budget: InFlightBudget = InFlightBudget(capacity: 16, appShare: 8),
        syncCheck: any VisualFallbackCheck = SyncedDevices()
    ) -> PushDispatchHandler {
        let publisher = publisher ?? self.publisher
        return PushDispatchHandler(
            provider: provider, lane: .interactive, budget: budget, publisher: publisher,
            reporter: OutcomeReporter(publisher: publisher, interval: .seconds(3600), maximumDeliveries: 1, logger: quietLogger),
            retryPolicy: Self.retryPolicy, metrics: DispatchMetrics(provider: .fcm), logger: quietLogger, syncCheck: syncCheck)
    }

    /// `messages` as the consumer hands them over (each a delivery).
    func deliveries(_ messages: [AMQPOutboundMessage]) -> [AMQPDelivery] {
        messages.enumerated().map { AMQPDelivery.received($1, tag: UInt64($0 + 1)) }
    }

    /// Handles `messages` with a handler on `provider`; the dispositions.
    func handle(_ messages: [AMQPOutboundMessage], with provider: ScriptedProvider, synced: SyncedDevices = SyncedDevices()) async -> [AMQPDisposition] {
        await handler(provider, syncCheck: synced).handle(deliveries(messages)).dispositions()
    }

    func batch(_ jobs: [PushJob]) -> AMQPOutboundMessage {
        AMQPOutboundMessage(routingKey: Self.queue, wire: PushJobBatch(jobs: jobs))
    }

    /// The outcomes reported on push.feedback.
    func outcomes() throws -> [PushOutcome] {
        try publisher.all.filter { $0.routingKey == QueueNames.pushFeedback }.flatMap { try $0.read(as: PushOutcomeBatch.self).outcomes }
    }

    /// What was published besides feedback (retries and dead letters).
    var consequences: [AMQPOutboundMessage] { publisher.all.filter { $0.routingKey != QueueNames.pushFeedback } }

    @Test("an accepted push is acked and reported accepted; nothing else is published")
    func accepted() async throws {
        let job = PushJob.fixture()
        let provider = ScriptedProvider { _ in PushVerdict(action: .accepted, status: 200, reason: nil) }
        #expect(await handle([batch([job])], with: provider) == [.ack])
        #expect(provider.sent.map(\.pushId) == [job.pushId])
        let outcome = try #require(try outcomes().first)
        #expect(try outcomes().count == 1)
        #expect(outcome.pushId == job.pushId)
        #expect(outcome.subscriptionId == job.subscriptionId)
        #expect(outcome.result == .accepted)
        #expect(outcome.status == 200)
        #expect(outcome.attempt == 0)
        #expect(consequences.isEmpty)
    }

    @Test("a transient failure waits in the retry queue of its next delay, due then, to go back to its provider's queue")
    func retried() async throws {
        let job = PushJob.fixture()
        let provider = ScriptedProvider { _ in PushVerdict(action: .retry(after: nil), status: 503, reason: "UNAVAILABLE") }
        let before = Date()
        #expect(await handle([batch([job])], with: provider) == [.ack])
        let retry = try #require(consequences.first)
        #expect(consequences.count == 1)
        #expect(retry.routingKey == "push.retry.1000ms")
        #expect(retry.properties.headers[DelayedForward.targetHeader] == .string(Self.queue))
        let due = try #require(retry.properties.headers[DelayedForward.dueHeader]?.integerValue)
        let dueAfter = Double(due) / 1000 - before.timeIntervalSince1970
        #expect(dueAfter >= 0.8 && dueAfter <= 1.0 + Date().timeIntervalSince(before), "the first delay, less up to 20 % jitter")
        let retried = try retry.read(as: PushJobBatch.self).jobs
        #expect(retried.map(\.pushId) == [job.pushId])
        #expect(retried.map(\.attempt) == [1])
        let outcome = try #require(try outcomes().first)
        #expect(outcome.result == .retrying)
        #expect(outcome.attempt == 0, "the attempt that was made")
        #expect(outcome.reason == "UNAVAILABLE")
    }

    @Test("a Retry-After longer than the next delay moves the retry to the first delay that covers it")
    func retryAfter() async throws {
        let provider = ScriptedProvider { _ in PushVerdict(action: .retry(after: 20), status: 429, reason: "QUOTA_EXCEEDED") }
        let before = Date()
        _ = await handle([batch([PushJob.fixture()])], with: provider)
        let retry = try #require(consequences.first)
        #expect(retry.routingKey == "push.retry.25000ms")
        #expect(try retry.read(as: PushJobBatch.self).jobs.map(\.attempt) == [3])
        let due = try #require(retry.properties.headers[DelayedForward.dueHeader]?.integerValue)
        #expect(Double(due) / 1000 >= before.timeIntervalSince1970 + 20, "not before the provider asked")
    }

    @Test("out of retries, a push is dead-lettered with the reason and reported failed")
    func outOfRetries() async throws {
        let job = PushJob.fixture(attempt: Self.retryPolicy.maximumAttempts)
        let provider = ScriptedProvider { _ in PushVerdict(action: .retry(after: nil), status: 500, reason: "INTERNAL") }
        #expect(await handle([batch([job])], with: provider) == [.ack])
        let dead = try #require(consequences.first)
        #expect(consequences.count == 1)
        #expect(dead.routingKey == AMQPTopology.deadLetterQueue(of: Self.queue))
        #expect(dead.properties.headers["x-notify-reason"] == .string("gave up after 3 retries: INTERNAL"))
        #expect(dead.properties.headers["x-notify-queue"] == .string(Self.queue))
        #expect(try dead.read(as: PushJobBatch.self).jobs.map(\.pushId) == [job.pushId])
        #expect(try outcomes().map(\.result) == [.failed])
    }

    @Test("a token the provider no longer knows is reported invalid (storage removes the subscription), neither retried nor dead-lettered")
    func tokenInvalid() async throws {
        let since = Date(timeIntervalSince1970: 1_800_000_000)
        let provider = ScriptedProvider { job in
            PushVerdict(action: .tokenInvalid(since: job.deviceToken == "expired" ? since : nil), status: 404, reason: "UNREGISTERED")
        }
        let before = Date()
        _ = await handle([batch([PushJob.fixture(deviceToken: "expired"), PushJob.fixture(deviceToken: "gone")])], with: provider)
        #expect(consequences.isEmpty)
        let reported = try outcomes()
        #expect(reported.map(\.result) == [.tokenInvalid, .tokenInvalid])
        #expect(reported[0].invalidSince == since, "the time the provider gave")
        let invalidSince = try #require(reported[1].invalidSince)
        #expect(invalidSince >= before, "else now")
    }

    @Test("refused credentials and hopeless pushes are dead-lettered and reported (storage flags the credentials)", arguments: [
        (PushAction.credentials, PushOutcome.Result.credentialsRejected, "the provider refused the app's credentials: PERMISSION_DENIED"),
        (.fail, .failed, "PERMISSION_DENIED"),
    ])
    func deadLettered(action: PushAction, result: PushOutcome.Result, reason: String) async throws {
        let provider = ScriptedProvider { _ in PushVerdict(action: action, status: 403, reason: "PERMISSION_DENIED") }
        #expect(await handle([batch([PushJob.fixture()])], with: provider) == [.ack])
        let dead = try #require(consequences.first)
        #expect(dead.routingKey == AMQPTopology.deadLetterQueue(of: Self.queue))
        #expect(dead.properties.headers["x-notify-reason"] == .string(reason))
        #expect(try outcomes().map(\.result) == [result])
        #expect(try outcomes().map(\.status) == [403])
    }

    @Test("a batch's outcomes go out together, and its retries of one delay in one message, before the outcomes")
    func wholeBatch() async throws {
        let jobs = [PushJob.fixture(deviceToken: "ok"), PushJob.fixture(deviceToken: "busy-1"), PushJob.fixture(deviceToken: "busy-2")]
        let provider = ScriptedProvider { job in
            job.deviceToken == "ok" ? PushVerdict(action: .accepted, status: 200, reason: nil) : PushVerdict(action: .retry(after: nil), status: 503, reason: nil)
        }
        #expect(await handle([batch(Array(jobs[0...1])), batch([jobs[2]])], with: provider) == [.ack, .ack])
        #expect(publisher.publishes.map { $0.map(\.routingKey) } == [["push.retry.1000ms"], [QueueNames.pushFeedback]])
        #expect(try consequences[0].read(as: PushJobBatch.self).jobs.map(\.deviceToken).sorted() == ["busy-1", "busy-2"])
        #expect(try outcomes().map(\.result).sorted { $0.rawValue < $1.rawValue } == [.accepted, .retrying, .retrying])
    }

    @Test("the jobs of several apps in one batch are all sent, and their outcomes go out together")
    func severalApps() async throws {
        let jobs = [PushJob.fixture(appId: "app_a"), PushJob.fixture(appId: "app_b"), PushJob.fixture(appId: "app_a")]
        let provider = ScriptedProvider { _ in PushVerdict(action: .accepted, status: 200, reason: nil) }
        #expect(await handle([batch(jobs)], with: provider) == [.ack])
        #expect(Set(provider.sent.map(\.pushId)) == Set(jobs.map(\.pushId)))
        #expect(publisher.publishes.count == 1)
        #expect(Set(try outcomes().map(\.pushId)) == Set(jobs.map(\.pushId)))
    }

    @Test("a message that is not a push-job batch is dead-lettered; the batch's other messages are handled")
    func notABatch() async throws {
        let job = PushJob.fixture()
        let garbage = AMQPOutboundMessage(routingKey: Self.queue, body: Data("not protobuf".utf8), properties: AMQPProperties(contentType: "application/x-protobuf"))
        let provider = ScriptedProvider { _ in PushVerdict(action: .accepted, status: 200, reason: nil) }
        let dispositions = await handle([garbage, batch([job])], with: provider)
        guard case .deadLetter = dispositions.first else {
            Issue.record("not dead-lettered: \(dispositions)")
            return
        }
        #expect(dispositions.last == .ack)
        #expect(provider.sent.map(\.pushId) == [job.pushId])
    }

    @Test("a visual fallback whose device synced is not sent, nor reported; the others are")
    func visualFallback() async throws {
        var synced = PushJob.fixture(deviceToken: "synced")
        synced.isVisualFallback = true
        var unsynced = PushJob.fixture(deviceToken: "behind")
        unsynced.isVisualFallback = true
        let regular = PushJob.fixture(deviceToken: "regular")
        let provider = ScriptedProvider { _ in PushVerdict(action: .accepted, status: 200, reason: nil) }
        let dispositions = await handle(
            [batch([synced]), batch([unsynced]), batch([regular])], with: provider, synced: SyncedDevices(synced: [synced.subscriptionId]))
        #expect(dispositions == [.ack, .ack, .ack])
        #expect(provider.sent.map(\.deviceToken).sorted() == ["behind", "regular"])
        #expect(Set(try outcomes().map(\.pushId)) == [unsynced.pushId, regular.pushId])
    }

    @Test("an app whose provider answers slowly has its further jobs parked, to come back later, instead of holding slots")
    func parked() async throws {
        let provider = GatedProvider()
        // Every app at its share of one counts as slow at once.
        let budget = InFlightBudget(capacity: 4, appShare: 1, slowAfter: .nanoseconds(-1))
        let handler = handler(provider, budget: budget)
        let slow = PushJob.fixture(deviceToken: "slow")
        let firstHandling = await handler.handle(deliveries([batch([slow])]))
        let first = Task { await firstHandling.dispositions() }
        while provider.sent.isEmpty { try await Task.sleep(for: .milliseconds(5)) }

        let waiting = [PushJob.fixture(deviceToken: "next-1"), PushJob.fixture(deviceToken: "next-2")]
        let before = Date()
        #expect(await handler.handle(deliveries([batch(waiting)])).dispositions() == [.ack])
        #expect(provider.sent.map(\.pushId) == [slow.pushId], "the waiting jobs were not sent")
        let parked = try #require(consequences.first)
        #expect(parked.routingKey == QueueNames.pushParked)
        #expect(try parked.read(as: PushJobBatch.self).jobs.map(\.pushId) == waiting.map(\.pushId))
        #expect(parked.properties.headers[DelayedForward.targetHeader] == .string(Self.queue))
        let due = try #require(parked.properties.headers[DelayedForward.dueHeader]?.integerValue)
        #expect(Double(due) / 1000 >= before.timeIntervalSince1970 + 1, "parked for a second at least")

        provider.release()
        #expect(await first.value == [.ack])
        #expect(try outcomes().map(\.pushId) == [slow.pushId], "parked jobs have no outcome yet")
    }

    @Test("retries the broker does not confirm are published again; at shutdown the batch goes back to its queue, unacked")
    func unconfirmedConsequences() async throws {
        let refusing = RecordingPublisher(refusing: AMQPError(code: .notConnected, message: "not connected to the broker"))
        let provider = ScriptedProvider { _ in PushVerdict(action: .retry(after: nil), status: 503, reason: nil) }
        let handling = await handler(provider, publisher: refusing).handle(deliveries([batch([PushJob.fixture()])]))
        let settled = Task { await handling.dispositions() }
        while refusing.refusedCount < 2 { try await Task.sleep(for: .milliseconds(10)) }
        settled.cancel()
        #expect(await settled.value == [.requeue])
    }

    @Test("while the database cannot say whether devices synced, visual fallbacks are not sent; at shutdown they go back to their queue")
    func fallbackCheckFails() async throws {
        var fallback = PushJob.fixture()
        fallback.isVisualFallback = true
        let database = UnreachableDatabase()
        let provider = ScriptedProvider { _ in PushVerdict(action: .accepted, status: 200, reason: nil) }
        let handling = await handler(provider, syncCheck: database).handle(deliveries([batch([fallback])]))
        let settled = Task { await handling.dispositions() }
        while database.attempts < 2 { try await Task.sleep(for: .milliseconds(10)) }
        settled.cancel()
        #expect(await settled.value == [.requeue])
        #expect(provider.sent.isEmpty)
        #expect(publisher.all.isEmpty)
    }
}
