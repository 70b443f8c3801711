import Testing

@testable import NotifyAMQP

/// The publisher's states and what it does in each: which publishes it takes, what its connection thread takes and
/// hands back, and when the thread ends. No broker needed (requests are plain numbers here).
@Suite("AMQPPublisher's state machine")
struct PublisherStateMachineTests {
    private typealias Machine = PublisherStateMachine<Int>

    /// Publishes `request`: the code of the error it is refused with, nil when it waits for the thread.
    private func publish(_ request: Int, to machine: inout Machine) -> AMQPError.Code? {
        switch machine.publish(request) {
        case .wakeThread: return nil
        case .refuse(let error): return error.code
        }
    }

    @Test("before its connection is up a publish is refused as not connected; once connected it waits for the thread")
    func publishWaitsOnlyWhileConnected() {
        var machine = Machine()
        #expect(publish(1, to: &machine) == .notConnected)
        let started = machine.start()
        #expect(started)
        #expect(publish(2, to: &machine) == .notConnected)
        #expect(!machine.isConnected)
        machine.connected()
        #expect(machine.isConnected)
        #expect(publish(3, to: &machine) == nil)
        #expect(publish(4, to: &machine) == nil)
        #expect(!machine.inboxIsEmpty)
        let taken = machine.takeInbox()
        #expect(taken.requests == [3, 4])
        #expect(!taken.stopping)
        #expect(machine.inboxIsEmpty)
        let takenAgain = machine.takeInbox()
        #expect(takenAgain.requests.isEmpty, "each request is taken once")
    }

    @Test("the thread is started once")
    func startedOnce() {
        var machine = Machine()
        let first = machine.start()
        let second = machine.start()
        machine.connected()
        let third = machine.start()
        #expect([first, second, third] == [true, false, false])
    }

    @Test("a dropped connection hands back what the thread had not taken, and publishes are refused until it is back")
    func dropHandsBackTheInbox() {
        var machine = Machine()
        _ = machine.start()
        machine.connected()
        _ = publish(1, to: &machine)
        _ = machine.takeInbox()
        _ = publish(2, to: &machine)
        _ = publish(3, to: &machine)
        let handedBack = machine.disconnected()
        #expect(handedBack == [2, 3])
        #expect(!machine.isConnected)
        #expect(!machine.isStopping, "the thread reconnects")
        #expect(publish(4, to: &machine) == .notConnected)
        machine.connected()
        #expect(publish(5, to: &machine) == nil)
        let taken = machine.takeInbox()
        #expect(taken.requests == [5])
    }

    @Test("shutdown while connected refuses new publishes; what waits still goes out before the thread ends")
    func shutdownDrains() {
        var machine = Machine()
        _ = machine.start()
        machine.connected()
        _ = publish(1, to: &machine)
        machine.stop()
        #expect(machine.isStopping)
        #expect(machine.isConnected, "the connection stays up for what waits")
        #expect(publish(2, to: &machine) == .shutdown)
        let taken = machine.takeInbox()
        #expect(taken.requests == [1])
        #expect(taken.stopping)
        #expect(machine.inboxIsEmpty)
        let handedBack = machine.disconnected()
        #expect(handedBack.isEmpty)
        #expect(!machine.isConnected)
        #expect(machine.isStopping)
        #expect(publish(3, to: &machine) == .shutdown)
    }

    @Test("shutdown while connecting ends the thread; a connection made meanwhile has nothing to send")
    func shutdownWhileConnecting() {
        var machine = Machine()
        _ = machine.start()
        machine.stop()
        #expect(machine.isStopping)
        #expect(publish(1, to: &machine) == .shutdown)
        machine.connected()
        let taken = machine.takeInbox()
        #expect(taken.requests.isEmpty)
        #expect(taken.stopping)
        let handedBack = machine.disconnected()
        #expect(handedBack.isEmpty)
        #expect(machine.isStopping)
    }

    @Test("shutdown before start: starting then lets the thread end at once")
    func shutdownBeforeStart() {
        var machine = Machine()
        machine.stop()
        #expect(machine.isStopping)
        #expect(publish(1, to: &machine) == .shutdown)
        let started = machine.start()
        #expect(started, "the thread still runs, and ends")
        #expect(machine.isStopping)
        let startedAgain = machine.start()
        #expect(!startedAgain)
    }
}
