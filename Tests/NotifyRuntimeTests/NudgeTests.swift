import NotifyRuntime
import Testing

/// `Nudge`: a loop's pause ends when it is given work, and only then before its timeout.
@Suite("a loop's nudge")
struct NudgeTests {
    @Test("a nudge before the pause ends it at once; many count as one, so the next pause waits out its timeout", .timeLimit(.minutes(1)))
    func nudgeBeforePause() async {
        let nudge = Nudge()
        nudge.nudge()
        nudge.nudge()
        nudge.nudge()
        await nudge.pause(upTo: .seconds(3600))
        let started = ContinuousClock.now
        await nudge.pause(upTo: .milliseconds(50))
        #expect(ContinuousClock.now - started >= .milliseconds(50), "nothing nudged it since the last pause")
    }

    @Test("a nudge during the pause ends it", .timeLimit(.minutes(1)))
    func nudgeDuringPause() async throws {
        let nudge = Nudge()
        let paused = Task { await nudge.pause(upTo: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        nudge.nudge()
        await paused.value
    }

    @Test("a cancelled pause ends, and a nudge after it is kept for the next", .timeLimit(.minutes(1)))
    func cancelledPause() async throws {
        let nudge = Nudge()
        let paused = Task { await nudge.pause(upTo: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        paused.cancel()
        await paused.value
        nudge.nudge()
        await nudge.pause(upTo: .seconds(3600))
    }
}
