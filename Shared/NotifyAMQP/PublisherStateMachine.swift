/// Where an `AMQPPublisher` stands: whether its connection thread runs, whether it is connected, whether shutdown was
/// asked, and the publish requests waiting for the thread. Each event is a method that makes the transition and says
/// what the caller does next; the publisher holds the machine in a mutex, and acts outside it.
struct PublisherStateMachine<Request> {
    enum State {
        /// Made; the connection thread does not run yet.
        case initial
        /// The thread runs and connects (or reconnects): publishes are refused as not connected.
        case connecting
        /// Connected: publishes wait in `inbox` until the thread takes them.
        case connected(inbox: [Request])
        /// Shutdown was asked while connected: publishes are refused; the thread still sends what `inbox` holds and
        /// awaits its confirms before it closes the connection.
        case draining(inbox: [Request])
        /// Shutdown was asked before the thread was started: starting it now only lets it end.
        case stoppedBeforeStart
        /// Shutdown was asked and the connection is down (or never came up): the thread ends.
        case stopped
    }

    private var state: State = .initial

    /// What to do about a publish request.
    enum PublishAction {
        /// It waits in the inbox: wake the thread.
        case wakeThread
        /// Answer it with this error at once.
        case refuse(AMQPError)
    }

    /// Whether the connection is up (shutdown may have been asked).
    var isConnected: Bool {
        switch state {
        case .connected, .draining: return true
        case .initial, .connecting, .stoppedBeforeStart, .stopped: return false
        }
    }

    /// Whether shutdown was asked.
    var isStopping: Bool {
        switch state {
        case .draining, .stoppedBeforeStart, .stopped: return true
        case .initial, .connecting, .connected: return false
        }
    }

    /// Whether no request waits for the thread.
    var inboxIsEmpty: Bool {
        switch state {
        case .connected(let inbox), .draining(let inbox): return inbox.isEmpty
        case .initial, .connecting, .stoppedBeforeStart, .stopped: return true
        }
    }

    /// Asked to start: true the first time, when the caller starts the connection thread.
    mutating func start() -> Bool {
        switch state {
        case .initial:
            state = .connecting
            return true
        case .stoppedBeforeStart:
            state = .stopped
            return true
        case .connecting, .connected, .draining, .stopped:
            return false
        }
    }

    /// Shutdown asked (the caller wakes the thread): no further publish is taken.
    mutating func stop() {
        switch state {
        case .initial: state = .stoppedBeforeStart
        case .connecting: state = .stopped
        case .connected(let inbox): state = .draining(inbox: inbox)
        case .draining, .stoppedBeforeStart, .stopped: break
        }
    }

    /// A publish request: queued while connected and not stopping, else refused.
    mutating func publish(_ request: Request) -> PublishAction {
        switch state {
        case .connected(var inbox):
            inbox.append(request)
            state = .connected(inbox: inbox)
            return .wakeThread
        case .initial, .connecting:
            return .refuse(AMQPError(code: .notConnected, message: "not connected to the broker"))
        case .draining, .stoppedBeforeStart, .stopped:
            return .refuse(AMQPError(code: .shutdown, message: "the publisher is shutting down"))
        }
    }

    /// The thread connected (and declared the topology): publishes are taken from now on, unless shutdown was asked
    /// meanwhile, in which case the thread finds nothing to send and closes the connection.
    mutating func connected() {
        switch state {
        case .connecting: state = .connected(inbox: [])
        case .stopped: state = .draining(inbox: [])
        case .initial, .stoppedBeforeStart, .connected, .draining: break
        }
    }

    /// The thread takes the waiting requests to send them; also answers whether shutdown was asked.
    mutating func takeInbox() -> (requests: [Request], stopping: Bool) {
        switch state {
        case .connected(let inbox):
            state = .connected(inbox: [])
            return (inbox, false)
        case .draining(let inbox):
            state = .draining(inbox: [])
            return (inbox, true)
        case .initial, .connecting, .stoppedBeforeStart, .stopped:
            return ([], isStopping)
        }
    }

    /// The connection dropped or was closed: answers the requests the thread did not take, for the caller to fail.
    /// Publishes are refused from now on, so a caller that retries at once is not queued on the dead connection.
    mutating func disconnected() -> [Request] {
        switch state {
        case .connected(let inbox):
            state = .connecting
            return inbox
        case .draining(let inbox):
            state = .stopped
            return inbox
        case .initial, .connecting, .stoppedBeforeStart, .stopped:
            return []
        }
    }
}
