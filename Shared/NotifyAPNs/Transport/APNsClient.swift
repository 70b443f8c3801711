import Foundation
import NIOCore
import NotifyAPNsCore
import NotifyModels

/// Sends pushes over the APNs provider API (HTTP/2, token auth).
public struct APNsClient: Sendable {
    /// What APNs answered.
    public enum Answer: Sendable, Equatable {
        case accepted
        /// APNs refused it: status, Apple's reason (e.g. 410 Unregistered), Retry-After seconds,
        /// and for 410 the time Apple says the token stopped being valid.
        case rejected(status: Int, reason: String, retryAfter: Int?, invalidSince: Date?)
        /// No answer: connection refused, reset or timed out.
        case unreachable(String)
    }

    /// An answer, and how long after the send it came.
    public struct TimedAnswer: Sendable {
        public var answer: Answer
        public var answerTime: Duration

        public init(answer: Answer, answerTime: Duration) {
            self.answer = answer
            self.answerTime = answerTime
        }
    }

    public let connections: APNsTransport
    public let signer: APNsTokenSigner
    public var timeout: TimeAmount

    public init(connections: APNsTransport, signer: APNsTokenSigner, timeout: TimeAmount = .seconds(10)) {
        self.connections = connections
        self.signer = signer
        self.timeout = timeout
    }

    /// Sends the pushes of one app over its key's connections, all at once, and answers each in the order of `jobs`.
    public func send(_ jobs: [PushJob], credentials: APNsCredentials) async -> [TimedAnswer] {
        let token: String
        do {
            token = try await signer.token(teamId: credentials.teamId, keyId: credentials.keyId, privateKeyPEM: credentials.privateKey)
        } catch {
            let refused = Answer.rejected(status: 403, reason: "InvalidProviderToken", retryAfter: nil, invalidSince: nil)
            return Array(repeating: TimedAnswer(answer: refused, answerTime: .zero), count: jobs.count)
        }
        let pool: APNsConnectionPool
        do {
            pool = try connections.pool(teamId: credentials.teamId, keyId: credentials.keyId, baseURL: credentials.baseURL)
        } catch {
            return Array(repeating: TimedAnswer(answer: .unreachable(String(describing: error)), answerTime: .zero), count: jobs.count)
        }
        let requests = APNsRequestBuilder(endpoint: pool.endpoint, token: token, topic: credentials.topic).requests(for: jobs)
        return await pool.send(requests, timeout: timeout).map { answer in
            TimedAnswer(answer: Self.answer(answer.result), answerTime: .nanoseconds(answer.elapsed.nanoseconds))
        }
    }

    private static func answer(_ result: Result<APNsTransportResponse, APNsTransportError>) -> Answer {
        switch result {
        case .failure(let error):
            return .unreachable(String(describing: error))
        case .success(let response):
            if response.status == 200 { return .accepted }
            let error = response.body.flatMap { try? JSONDecoder().decode(APNsErrorBody.self, from: Data($0.readableBytesView)) }
            return .rejected(
                status: response.status, reason: error?.reason ?? "HTTP \(response.status)",
                retryAfter: response.retryAfter.flatMap { RetryAfter.seconds($0) },
                invalidSince: error?.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) })
        }
    }
}

/// APNs error body: `{"reason": "BadDeviceToken"}`; 410 adds `"timestamp"` in milliseconds.
private struct APNsErrorBody: Decodable {
    var reason: String
    var timestamp: Double?
}
