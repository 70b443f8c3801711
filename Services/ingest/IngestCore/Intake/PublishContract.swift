import Foundation
import NotifyModels
import NotifyStore

/// What publishing over HTTP and over AMQP share, so an app server meets one contract whichever way it comes in:
/// the body limit, the reading and validation, the idempotency rule, the answer (status and body) and its errors.
///
/// Idempotency: the key is the request's `Idempotency-Key` header (HTTP) or the message's `message_id` (AMQP); ids
/// derive from it, so a retry produces the same commands and storage applies them once. Without a key, a
/// notification's `appNotificationId` keys it (publishing it again replaces it). Over AMQP one of the two is required:
/// a publisher that retries after a missing confirm, or a broker that redelivers, would otherwise create a second
/// notification. Over HTTP the client sees the answer and either is optional.
struct PublishContract: Sendable {
    enum Transport: Sendable {
        case http, amqp
    }

    /// The largest body accepted: 1 MiB, the same for both.
    static let maximumBodyBytes = JSONResponse.maximumBodyBytes
    /// The longest idempotency key.
    static let maximumKeyLength = 255

    let intake: NotificationIntake
    /// Resolves subscription ids and event sources (only for bodies that name them).
    let targets: any TargetDirectory

    /// What to send to storage, and the answer once the broker confirmed it.
    struct Accepted: Sendable {
        var commands: [StorageCommand]
        var status: Int
        var body: [UInt8]
        /// No notification was accepted: the answer is a refusal (a batch whose every item was refused).
        var acceptedNone: Bool { commands.isEmpty }
        /// The notification stored for a user by a single publish to them (nil for anything else).
        var userNotification: PublishedNotification? {
            guard commands.count == 1, case .publishNotification(let published) = commands[0].action else { return nil }
            return published
        }
    }

    /// Reads and validates a publish body. Throws for a body refused as a whole (unreadable, too large, no key over
    /// AMQP, a single notification refused); a batch answers each item.
    func accept(_ body: some ContiguousBytes, byteCount: Int, appId: String, idempotencyKey: String?, via transport: Transport)
        async throws(APIFailure) -> Accepted
    {
        guard byteCount <= Self.maximumBodyBytes else { throw APIFailure.bodyTooLarge }
        let keyField = transport == .amqp ? "message_id" : "Idempotency-Key"
        if let idempotencyKey, idempotencyKey.isEmpty || idempotencyKey.utf8.count > Self.maximumKeyLength {
            throw APIFailure(ValidationError.invalid(keyField, "\(keyField) must be 1 to \(Self.maximumKeyLength) bytes"))
        }
        let read = try PublishBody.decode(body)
        if transport == .amqp, idempotencyKey == nil,
            read.items.contains(where: { (try? $0.get())?.appNotificationId == nil })
        {
            throw APIFailure(
                .badRequest, code: "missing_idempotency_key",
                message: "set message_id (or an appNotificationId on every notification): without either, a retried publish would create a second notification",
                field: "message_id")
        }
        return try await accept(read.items, form: read.form, appId: appId, idempotencyKey: idempotencyKey)
    }

    /// A single notification read from another vocabulary than notify's own (Graph's): the targets resolved, the
    /// validation and the answer are a single notification's over HTTP; its `appNotificationId` keys it.
    func accept(_ request: NotificationRequest, appId: String) async throws(APIFailure) -> Accepted {
        try await accept([.success(request)], form: .single, appId: appId, idempotencyKey: nil)
    }

    private func accept(
        _ items: [Result<NotificationRequest, ValidationError>], form: PublishBody.Form, appId: String, idempotencyKey: String?
    ) async throws(APIFailure) -> Accepted {
        let resolved = try await ResolvedTargets.resolve(items.compactMap { try? $0.get() }, appId: appId, in: targets)
        let outcome = intake.accept(items, form: form, appId: appId, idempotencyKey: idempotencyKey, targets: resolved)
        if form == .single {
            let result = outcome.results[0]
            if let id = result.id { return Accepted(commands: outcome.commands, status: 202, body: NotificationIntake.Outcome.acceptedJSON(id)) }
            throw APIFailure(.init(code: result.status), code: result.error?.code ?? "invalid", message: result.error?.message ?? "", field: result.error?.field)
        }
        return Accepted(commands: outcome.commands, status: outcome.acceptedCount > 0 ? 202 : 400, body: outcome.resultsJSON())
    }
}
