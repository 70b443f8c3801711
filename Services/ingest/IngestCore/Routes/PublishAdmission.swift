import Hummingbird
import NotifyModels

/// The steps of a publish over HTTP, whichever vocabulary its body is in (notify's own at `/notifications`, Graph's at
/// `/graph/users/{userId}/notifications`): the app's API key (one that may publish); the pipeline's backlog and the
/// app's request rate, checked before the body is read so that refusing stays cheap under overload; the body limit;
/// the reading and validation the caller gives (`PublishContract`'s); the app's notification rate; and the commands
/// sent to storage, answered once the broker confirmed them.
struct PublishAdmission: Sendable {
    let authenticator: Authenticator
    let sender: CommandSender
    let limiter: PublishRateLimiter
    let backlog: PipelineBacklog

    /// Admits `request` to `appId`: `accept` reads its body into what goes to storage, which is sent before this returns.
    func admit(
        _ request: Request, appId: String, accept: (ByteBuffer) async throws -> PublishContract.Accepted
    ) async throws -> PublishContract.Accepted {
        let app = try await authenticator.requireAppServer(request, appId: appId, for: .publish)
        if let refusal = backlog.refusal() { throw refusal }
        if let wait = limiter.admit(appId: appId, limit: app.rateLimit, requests: 1, notifications: 0) {
            throw APIFailure.rateLimited(appId: appId, limit: limiter.limit(for: app.rateLimit), retryAfterSeconds: wait)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: PublishContract.maximumBodyBytes)
        } catch {
            throw APIFailure.bodyTooLarge
        }
        let accepted = try await accept(buffer)
        if let wait = limiter.admit(appId: appId, limit: app.rateLimit, requests: 0, notifications: accepted.commands.count) {
            throw APIFailure.rateLimited(appId: appId, limit: limiter.limit(for: app.rateLimit), retryAfterSeconds: wait)
        }
        try await sender.send(accepted.commands)
        return accepted
    }
}
