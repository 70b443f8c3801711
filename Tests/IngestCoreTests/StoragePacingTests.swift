import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Synchronization
import Testing

@testable import IngestCore

/// Ingest's pacing of its publishes by storage's progress (`StoragePacing`), with storage's announcements stood in for.
struct StoragePacingTests {
    @Test("a publish alone asks for no announcement; a busy one marks one command of its last message, not one whose sender waits for it")
    func marksOnlyWhenBusy() {
        let storage = Announcements()
        let pacing = StoragePacing(announcements: storage)
        var alone = [Self.publish()]
        #expect(pacing.markAnnouncement(in: &alone, busy: false) == nil)
        #expect(!alone[0].announceWhenApplied)

        var busy = [Self.setBadge()] + (1..<StorageCommandBatch.maximumCommands).map { _ in Self.publish() } + [Self.setBadge(), Self.publish()]
        let marked = pacing.markAnnouncement(in: &busy, busy: true)
        #expect(marked == busy.last?.commandId, "the first of the last message's commands that no sender waits for")
        #expect(busy.filter(\.announceWhenApplied).map(\.commandId) == [busy.last!.commandId])
        #expect(storage.expected == [marked])

        let deaf = StoragePacing(announcements: Announcements(listening: false))
        var unheard = [Self.publish()]
        #expect(deaf.markAnnouncement(in: &unheard, busy: true) == nil, "nothing is asked while announcements cannot be heard")
    }

    @Test("a publish waits while storage has not applied one confirmed more than the allowed lag ago, until it does; younger ones hold no one up")
    func waitsForStorageBehindTheLag() async throws {
        let storage = Announcements()
        let pacing = StoragePacing(announcements: storage, allowedLag: .milliseconds(300), maximumHold: .seconds(30))
        let first = try Self.announce(pacing, busy: true)
        let second = try Self.announce(pacing, busy: true)
        let young = ContinuousClock.now
        await pacing.waitForTurn()
        #expect(ContinuousClock.now - young < .milliseconds(290), "storage is within the lag: no wait")
        try await Task.sleep(for: .milliseconds(400))
        let turn = Self.turnEnd(pacing)
        try await Task.sleep(for: .milliseconds(200))
        let applied = ContinuousClock.now
        storage.apply(first)
        storage.apply(second)
        let ended = await turn.value
        #expect(ended >= applied, "it waited for storage, however late its task started")
        #expect(ended - applied < .seconds(10))
        // Nothing is ahead any more: the next publish does not wait, and asks for nothing while alone.
        await pacing.waitForTurn()
        var alone = [Self.publish()]
        #expect(pacing.markAnnouncement(in: &alone, busy: false) == nil)
    }

    @Test("when storage does not apply within the hold, publishes stop waiting until storage is heard applying one")
    func pausesWhileStorageIsStopped() async throws {
        let storage = Announcements()
        let hold = Duration.milliseconds(500)
        let pacing = StoragePacing(announcements: storage, allowedLag: .milliseconds(10), maximumHold: hold)
        _ = try Self.announce(pacing, busy: true)
        let confirmed = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(20))
        await pacing.waitForTurn()
        #expect(ContinuousClock.now - confirmed >= hold - .milliseconds(10), "the first waits out the hold")
        var later: [UUID] = []
        for _ in 0..<12 {
            later.append(try Self.announce(pacing, busy: true))
            try await Task.sleep(for: .milliseconds(20))
            let turn = ContinuousClock.now
            await pacing.waitForTurn()
            #expect(ContinuousClock.now - turn < hold - .milliseconds(100), "paused: no publish waits out a hold")
        }
        #expect(storage.forgottenCount > 0, "only the newest few are kept while paused")
        // Storage is back and applies the newest: pacing resumes.
        storage.apply(later.last!)
        await pacing.waitForTurn()
        let next = try Self.announce(pacing, busy: true)
        try await Task.sleep(for: .milliseconds(20))
        let turn = Self.turnEnd(pacing)
        try await Task.sleep(for: .milliseconds(50))
        let applied = ContinuousClock.now
        storage.apply(next)
        #expect(await turn.value >= applied, "waiting again once storage is heard")
    }

    @Test("requests that come while a publish waits for storage go with it in one message, and each is answered once it is confirmed")
    func requestsGatherWhileWaiting() async throws {
        let storage = Announcements()
        let publisher = RecordingPublisher()
        let pacing = StoragePacing(announcements: storage, allowedLag: .milliseconds(10), maximumHold: .seconds(30))
        let sender = CommandSender(publisher: publisher, pacing: pacing, logger: .init(label: "test"))
        // A busy spell left a publish storage has not applied, and it is older than the lag.
        let ahead = try Self.announce(pacing, busy: true)
        try await Task.sleep(for: .milliseconds(20))
        let answered = AnswerCount()
        let requests = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await sender.send([Self.publish()])
                        answered.add()
                    }
                }
                try await group.waitForAll()
            }
        }
        // The first request publishes (and waits for storage); the nine others wait to go with the next publish.
        while sender.requestsWaiting < 9 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(answered.value == 0, "nothing is answered while storage has not applied the publish ahead")
        storage.apply(ahead)
        try await requests.value
        #expect(answered.value == 10)
        let messages = publisher.all
        #expect(messages.count <= 2, "the ten went in one message, or two if the first had taken its turn already: \(messages.count)")
    }

    private static func publish() -> StorageCommand {
        StorageCommand(action: .publishNotification(PublishedNotification(
            appId: "app", userId: "u", notificationId: UUID(), content: NotificationContent(
                appNotificationId: nil, groupName: nil, priority: .none, expirationDateTime: Date().addingTimeInterval(3600), displayTimeToLive: nil,
                platformTypes: nil, payload: NotificationPayload(), push: nil),
            receivedAt: Date())))
    }

    private static func setBadge() -> StorageCommand {
        StorageCommand(action: .setExternalBadge(appId: "app", userId: "u", badge: 1, at: Date()))
    }

    /// Waits for the next publish's turn in a task of its own; the task answers how long that took.
    /// When a publish's turn came: a task that waits for it and answers the time it ended.
    private static func turnEnd(_ pacing: StoragePacing) -> Task<ContinuousClock.Instant, Never> {
        Task {
            await pacing.waitForTurn()
            return ContinuousClock.now
        }
    }

    /// One busy publish through `pacing`, confirmed; answers the command it asked storage to announce.
    private static func announce(_ pacing: StoragePacing, busy: Bool) throws -> UUID {
        var commands = [publish()]
        let marked = try #require(pacing.markAnnouncement(in: &commands, busy: busy))
        pacing.published(marked, confirmed: true)
        return marked
    }
}

private final class AnswerCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}

/// Storage's announcements as the test makes them: `apply` announces a command.
private final class Announcements: AppliedAnnouncements {
    private struct State {
        var expected: [UUID] = []
        var applied: Set<UUID> = []
        var waiting: [UUID: CheckedContinuation<Bool?, Never>] = [:]
        var forgotten = 0
    }

    let isListening: Bool
    private let state = Mutex(State())

    init(listening: Bool = true) {
        isListening = listening
    }

    var expected: [UUID] { state.withLock { $0.expected } }
    var forgottenCount: Int { state.withLock { $0.forgotten } }

    func expect(_ commandId: UUID) {
        state.withLock { $0.expected.append(commandId) }
    }

    func forget(_ commandId: UUID) {
        state.withLock {
            $0.applied.remove(commandId)
            $0.forgotten += 1
        }
    }

    func takeIfApplied(_ commandId: UUID) -> Bool {
        state.withLock { $0.applied.remove(commandId) != nil }
    }

    func apply(_ commandId: UUID) {
        let waiting = state.withLock { state in
            guard let continuation = state.waiting.removeValue(forKey: commandId) else {
                state.applied.insert(commandId)
                return nil as CheckedContinuation<Bool?, Never>?
            }
            return continuation
        }
        waiting?.resume(returning: true)
    }

    func waitUntilApplied(_ commandId: UUID, timeout: Duration) async -> Bool? {
        await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let applied = self.state.withLock { state in
                        if state.applied.remove(commandId) != nil { return true }
                        state.waiting[commandId] = continuation
                        return false
                    }
                    if applied { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                let continuation = self.state.withLock { $0.waiting.removeValue(forKey: commandId) }
                continuation?.resume(returning: false)
                return false
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
