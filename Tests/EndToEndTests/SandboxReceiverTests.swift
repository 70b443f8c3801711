import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// The sandbox's webhook receivers, as the benchmarks read them.
    @Suite("the sandbox's webhook receivers")
    struct SandboxReceiverTests {
        private struct ReceiverLog: Decodable {
            struct Received: Decodable {
                var body: String
                var receivedAt: String
            }
            var received: [Received]
        }

        @Test("a receiver records when each POST arrived, before waiting out its delay")
        func receivedAtIsTheArrival() async throws {
            let receiverURL = "\(Stack.sandboxURL)/receivers/arrival-\(uniqueSuffix())"
            #expect(try await StackClient.send(.PUT, "\(receiverURL)?delay=1").status == 204)
            let sent = Date()
            let answer = try await StackClient.send(.POST, receiverURL, json: Data(#"{"n":1}"#.utf8))
            let answered = Date()
            #expect(answer.status == 204)

            let log = try await StackClient.send(.GET, receiverURL).decode(ReceiverLog.self)
            let received = try #require(log.received.first, "the receiver recorded nothing")
            #expect(received.body == #"{"n":1}"#)
            let arrived = try #require(WireCoding.parseTimestamp(received.receivedAt), "receivedAt is no timestamp: \(received.receivedAt)")
            // Milliseconds: the clock may have turned within the millisecond the POST was sent in.
            #expect(arrived >= sent.addingTimeInterval(-0.001), "recorded before it was sent")
            #expect(answered.timeIntervalSince(arrived) >= 0.9, "recorded when it was answered, not when it arrived")
        }
    }
}
