import NotifyOutbound
import NotifyTestSupport
import Synchronization

/// A provider endpoint in the test process, and the outbound client that may call it (the policy admits its port).
func withLoopbackProvider<Result>(
    answering answer: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response,
    _ body: (LoopbackHTTPServer, OutboundHTTPClient) async throws -> Result
) async throws -> Result {
    try await LoopbackHTTPServer.with(answering: answer) { server in
        let http = OutboundHTTPClient(policy: OutboundPolicy(allowance: try OutboundAllowance(parsing: "127.0.0.1:\(server.port)")))
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(server, http))
        } catch {
            outcome = .failure(error)
        }
        await http.shutdown()
        return try outcome.get()
    }
}

/// Answers given in turn, the last one again once the others are used up (e.g. a 401, then 200s).
final class AnswersInTurn: Sendable {
    private let remaining: Mutex<[LoopbackHTTPServer.Response]>

    init(_ answers: [LoopbackHTTPServer.Response]) {
        precondition(!answers.isEmpty, "no answer to give")
        remaining = Mutex(answers)
    }

    func next() -> LoopbackHTTPServer.Response {
        remaining.withLock { answers in answers.count > 1 ? answers.removeFirst() : answers[0] }
    }
}
