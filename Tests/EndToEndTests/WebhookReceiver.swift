import Foundation

/// A sandbox webhook receiver as the tests that point an app's webhook at one read it (`GET <receiver URL>`).
enum WebhookReceiver {
    /// What the receiver recorded: the POSTs it took, and how many it refused.
    struct Log: Decodable {
        struct Received: Decodable {
            var body: String
        }
        var received: [Received]
        var failed: Int?
    }

    /// A webhook event as a receiver got it.
    struct Event: Decodable {
        var type: String
        var data: [String: String]
    }

    static func log(at url: String) async throws -> Log {
        try await StackClient.send(.GET, url).decode(Log.self)
    }

    /// The events the receiver got, polled until `done` holds or `timeout` passed.
    static func events(at url: String, timeout: Duration = .seconds(30), until done: ([Event]) -> Bool) async throws -> [Event] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = try await log(at: url).received.map { try JSONDecoder().decode(Event.self, from: Data($0.body.utf8)) }
            if done(events) || ContinuousClock.now >= deadline { return events }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
