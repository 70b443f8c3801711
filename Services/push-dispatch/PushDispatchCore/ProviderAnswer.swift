import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyModels
import NotifyOutbound

/// What an HTTP provider endpoint (FCM, WNS, Web Push, or their token endpoints) answered.
enum ProviderAnswer: Sendable, Equatable {
    case accepted(status: Int)
    /// Refused: the status, the provider's reason (FCM `errorCode`, WNS error description, push service
    /// message) and Retry-After seconds if given.
    case rejected(status: Int, reason: String, retryAfter: Int?)
    /// No answer: connection refused, reset or timed out.
    case unreachable(String)
    /// Not sent: the outbound address policy refuses the URL's host (`OutboundRefusal`).
    case notAllowed(String)

    /// Sends `request` on the connections of `appId` (so that a push service slow for one app holds only that app's
    /// streams; empty: connections shared by every app) and reads the answer; `reason` names a refusal from the response
    /// and its body.
    static func send(
        _ request: HTTPClientRequest, of appId: String = "", on client: OutboundHTTPClient, timeout: TimeAmount = .seconds(10),
        reason: (HTTPClientResponse, ByteBuffer) -> String
    ) async -> (answer: ProviderAnswer, body: ByteBuffer) {
        do {
            let response = try await client.execute(request, timeout: timeout, partition: appId)
            let body = try await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) { return (.accepted(status: Int(response.status.code)), body) }
            let answer = ProviderAnswer.rejected(
                status: Int(response.status.code), reason: reason(response, body),
                retryAfter: response.headers.first(name: "retry-after").flatMap { RetryAfter.seconds($0) })
            return (answer, body)
        } catch let refusal as OutboundRefusal {
            return (.notAllowed(refusal.description), ByteBuffer())
        } catch {
            return (.unreachable(String(describing: error)), ByteBuffer())
        }
    }

    var status: Int? {
        switch self {
        case .accepted(let status), .rejected(let status, _, _): return status
        case .unreachable, .notAllowed: return nil
        }
    }

    var reason: String? {
        switch self {
        case .accepted: return nil
        case .rejected(_, let reason, _), .unreachable(let reason), .notAllowed(let reason): return reason
        }
    }
}

extension PushVerdict {
    /// The verdict of `answer` with the action it was classified as.
    init(_ action: PushAction, _ answer: ProviderAnswer) {
        self.init(action: action, status: answer.status, reason: answer.reason)
    }
}

/// A push that is not sent because its request cannot be built: what to do about it, and why.
struct UnsendablePush: Error {
    var action: PushAction
    var reason: String

    var verdict: PushVerdict { PushVerdict(action: action, status: nil, reason: reason) }
}
