import Foundation
import NotifyJSON
import NotifyModels

/// Validates notifications from either edge (HTTP or AMQP), gives each its identity, and builds the
/// storage commands. The same rules and results apply whichever way a notification came in.
struct NotificationIntake: Sendable {
    let validator: NotificationValidator

    /// The result of one notification, as answered to the app server.
    struct ItemResult: Sendable {
        var index: Int
        var status: Int
        var id: UUID?
        var error: APIErrorBody.Detail?

        /// `{"index", "status", "id"}` or `{"index", "status", "error": {"code", "message", "field"}}`.
        func write(to json: inout JSONWriter) {
            json.beginObject()
            json.key("index")
            json.integer(Int64(index))
            json.key("status")
            json.integer(Int64(status))
            if let id {
                json.key("id")
                json.uuid(id)
            }
            if let error {
                json.key("error")
                json.beginObject()
                json.key("code")
                json.string(error.code)
                json.key("message")
                json.string(error.message)
                if let field = error.field {
                    json.key("field")
                    json.string(field)
                }
                json.endObject()
            }
            json.endObject()
        }
    }

    /// Accepted commands and the answer of every item, in order.
    struct Outcome: Sendable {
        var commands: [StorageCommand] = []
        var results: [ItemResult] = []
        var acceptedCount: Int { commands.count }

        /// `{"id": …}`: the answer to one notification that was accepted, with its id as the API writes ids.
        static func acceptedJSON(_ id: UUID) -> [UInt8] {
            var json = JSONWriter(capacity: 48)
            json.beginObject()
            json.key("id")
            json.uuid(id)
            json.endObject()
            return json.bytes
        }

        /// `{"results": [...]}`: the answer to a batch, an item per notification in order.
        func resultsJSON() -> [UInt8] {
            var json = JSONWriter(capacity: 64 * results.count)
            json.beginObject()
            json.key("results")
            json.beginArray()
            for result in results { result.write(to: &json) }
            json.endArray()
            json.endObject()
            return json.bytes
        }
    }

    /// - Parameters:
    ///   - form: how the items came; a field an item of a batch (or a recipient) is refused for is named by its path in
    ///     the body (`notifications[1].payload`, `recipients[1].push.badge`), as the reader names a field of the wrong type.
    ///   - idempotencyKey: when the source names its message (AMQP `message_id`), ids derive from it,
    ///     so a redelivered message produces the same commands and storage applies them once.
    ///   - targets: what the items' subscription ids and event sources resolved to (`ResolvedTargets.resolve`).
    func accept(
        _ items: [Result<NotificationRequest, ValidationError>], form: PublishBody.Form, appId: String, idempotencyKey: String?,
        targets: ResolvedTargets = ResolvedTargets(), now: Date = Date()
    ) -> Outcome {
        var outcome = Outcome()
        for (index, item) in items.enumerated() {
            func pathed(_ error: ValidationError) -> ValidationError {
                var pathed = error
                if let path = form.path(of: index) { pathed.field = pathed.field.map { "\(path).\($0)" } }
                return pathed
            }
            let validated: NotificationValidator.Validated
            do throws(ValidationError) {
                let request = try item.get()
                do {
                    validated = try validator.validate(request, now: now)
                } catch {
                    throw pathed(error)
                }
            } catch {
                outcome.results.append(ItemResult(index: index, status: error.code == "payload_too_large" ? 413 : 400, id: nil, error: APIErrorBody(error).error))
                continue
            }
            // Who it is for, and which devices are pushed.
            var userId = validated.userId
            var pushSubscriptionIds: [UUID]?
            if let subscriptionId = validated.subscriptionId {
                guard let owner = targets.owners[subscriptionId] else {
                    let error = pathed(ValidationError(code: "subscription_not_found", message: "no subscription \(subscriptionId.lowercasedString) of this app", field: "subscriptionId"))
                    outcome.results.append(ItemResult(index: index, status: 404, id: nil, error: APIErrorBody(error).error))
                    continue
                }
                userId = owner
                pushSubscriptionIds = [subscriptionId]
            }
            if let source = validated.eventSource {
                guard targets.sources[source] != nil else {
                    let error = pathed(ValidationError(code: "event_source_not_found", message: "no event source \(source) in this app", field: "eventSource"))
                    outcome.results.append(ItemResult(index: index, status: 404, id: nil, error: APIErrorBody(error).error))
                    continue
                }
                if let userId {
                    // A user none of whose devices is in the source is not its member: nothing is stored for them (as
                    // MobileFirst answers a publish to a user without a subscription to the source).
                    guard let members = targets.members[source]?[userId], !members.isEmpty else {
                        let error = pathed(ValidationError(
                            code: "not_subscribed", message: "user \(userId) is not a member of event source \(source): none of their devices is in it",
                            field: "eventSource"))
                        outcome.results.append(ItemResult(index: index, status: 404, id: nil, error: APIErrorBody(error).error))
                        continue
                    }
                    pushSubscriptionIds = members
                }
            }
            let scope = userId.map { "user:\($0)" } ?? "source:\(validated.eventSource ?? "")"
            let notificationId: UUID
            if let appNotificationId = validated.content.appNotificationId, let userId {
                notificationId = DeterministicID.notificationID(appId: appId, userId: userId, appNotificationId: appNotificationId)
            } else if let appNotificationId = validated.content.appNotificationId {
                notificationId = DeterministicID.make("notification", appId, scope, appNotificationId)
            } else if let idempotencyKey {
                notificationId = DeterministicID.make("notification", appId, idempotencyKey, String(index))
            } else {
                notificationId = UUID.random()
            }
            let commandId = idempotencyKey.map { DeterministicID.make("command", appId, $0, String(index)) } ?? UUID.random()
            let action: StorageCommand.Action
            if let userId {
                action = .publishNotification(PublishedNotification(
                    appId: appId, userId: userId, notificationId: notificationId, content: validated.content, receivedAt: now,
                    pushSubscriptionIds: pushSubscriptionIds))
            } else {
                action = .publishBroadcast(PublishedBroadcast(
                    appId: appId, eventSource: validated.eventSource ?? "", notificationId: notificationId, content: validated.content, receivedAt: now,
                    recipientPush: validated.recipientPush, memberFilter: validated.memberFilter))
            }
            outcome.commands.append(StorageCommand(commandId: commandId, issuedAt: now, action: action))
            outcome.results.append(ItemResult(index: index, status: 202, id: notificationId, error: nil))
        }
        return outcome
    }
}

/// A publish body: one notification, or `{"notifications": [...]}`, read with `JSONReader` (JSONDecoder was a tenth
/// of ingest's CPU per request). It reads what JSONDecoder would read into `NotificationRequest`; a field of the
/// wrong type or value fails its own notification, named by its path (`notifications[1].priority` in a batch).
enum PublishBody {
    static let maximumBatch = 500

    /// How a body holds its notifications; each is answered by its place in it.
    enum Form: Sendable {
        /// One notification, answered `{"id"}` (or refused as a whole).
        case single
        /// `{"notifications": [...]}`, answered an item each.
        case batch
        /// One notification for several users (`recipients`), answered an item per recipient.
        case recipients

        /// Where the item at `index` sits in the body (nil: it is the body).
        func path(of index: Int) -> String? {
            switch self {
            case .single: nil
            case .batch: "notifications[\(index)]"
            case .recipients: "recipients[\(index)]"
            }
        }
    }

    /// The items and how the body held them.
    static func decode(_ body: some ContiguousBytes) throws(APIFailure) -> (items: [Result<NotificationRequest, ValidationError>], form: Form) {
        do {
            // The whole document's syntax first, as JSONDecoder checks it before reading any field.
            try JSONReader.read(body) { try $0.skipValue() }
        } catch {
            throw APIFailure(.badRequest, code: "invalid_json", message: "the body is not valid JSON")
        }
        guard isBatch(body) else {
            let item = notification(body)
            guard case .success(let request) = item, let recipients = request.recipients else { return ([item], .single) }
            if recipients.isEmpty {
                throw APIFailure(ValidationError.invalid("recipients", "recipients must not be empty"))
            }
            if recipients.count > maximumBatch {
                throw APIFailure(.contentTooLarge, code: "batch_too_large", message: "a notification has at most \(maximumBatch) recipients", field: "recipients")
            }
            // With eventSource alone, recipients give members push options of their own: still one broadcast.
            if request.eventSource != nil, request.userId == nil, request.subscriptionId == nil { return ([item], .single) }
            return (try expand(request, to: recipients), .recipients)
        }
        let items: [Result<NotificationRequest, ValidationError>]
        do {
            items = try JSONReader.read(body) { reader in
                var items: [Result<NotificationRequest, ValidationError>]?
                try reader.readObject { reader, key in
                    switch key {
                    case "notifications" where items == nil:
                        var read: [Result<NotificationRequest, ValidationError>] = []
                        try reader.readElements { reader in
                            let index = read.count
                            read.append(try reader.readRawValue { notification($0, at: "notifications[\(index)]") })
                        }
                        items = read
                    default: try reader.skipValue()
                    }
                }
                return items ?? []
            }
        } catch {
            throw APIFailure(validationError(error))
        }
        if items.isEmpty {
            throw APIFailure(.badRequest, code: "invalid_field", message: "notifications must not be empty", field: "notifications")
        }
        if items.count > maximumBatch {
            throw APIFailure(.contentTooLarge, code: "batch_too_large", message: "a batch holds at most \(maximumBatch) notifications", field: "notifications")
        }
        // A recipient list is a single notification's: in a batch, each item names its own user.
        let checked = items.enumerated().map { index, item in
            item.flatMap { request -> Result<NotificationRequest, ValidationError> in
                guard request.recipients == nil else {
                    return .failure(.invalid(
                        "notifications[\(index)].recipients", "recipients is for a single notification; in a batch, each item names its userId"))
                }
                return .success(request)
            }
        }
        return (checked, .batch)
    }

    /// A notification for each recipient: its user, and its push options over the notification's (with
    /// `pushRecipientsOnly`, a recipient without options of its own is not pushed).
    private static func expand(_ request: NotificationRequest, to recipients: [Recipient]) throws(APIFailure) -> [Result<NotificationRequest, ValidationError>] {
        if request.userId != nil || request.subscriptionId != nil {
            throw APIFailure(ValidationError.invalid(
                "recipients",
                "recipients names the users: leave out userId and subscriptionId (with eventSource alone, it gives members push options of their own)"))
        }
        do {
            try NotificationValidator.requireEachUserOnce(recipients)
        } catch {
            throw APIFailure(error)
        }
        return recipients.map { recipient in
            var item = request
            item.recipients = nil
            item.pushRecipientsOnly = nil
            item.userId = recipient.userId
            if let override = recipient.push {
                item.push = (request.push ?? PushOptions()).overridden(by: override)
            } else if request.pushRecipientsOnly == true {
                item.push = NotificationValidator.unpushed(request.push)
            }
            return .success(item)
        }
    }

    /// Whether the body is an object with a `notifications` member (of any value).
    private static func isBatch(_ body: some ContiguousBytes) -> Bool {
        let found = try? JSONReader.read(body) { reader in
            var found = false
            try reader.readObject { reader, key in
                if case "notifications" = key { found = true }
                try reader.skipValue()
            }
            return found
        }
        return found ?? false
    }

    /// One notification object; `path` is where it sits in the body (nil: it is the body).
    private static func notification(_ json: some ContiguousBytes, at path: String? = nil) -> Result<NotificationRequest, ValidationError> {
        Result { try JSONReader.read(json) { try NotificationRequest(reading: &$0) } }.mapError { validationError($0, at: path) }
    }

    private static func validationError(_ error: any Error, at path: String? = nil) -> ValidationError {
        guard let error = error as? JSONReadError else {
            return ValidationError(code: "invalid_json", message: "the body could not be read", field: nil)
        }
        let field = [path, error.path.isEmpty ? nil : error.path].compactMap { $0 }.reduce("") { field, step in
            field.isEmpty || step.hasPrefix("[") ? field + step : field + "." + step
        }
        if field.isEmpty {
            return ValidationError(code: "invalid_field", message: "the body is invalid: \(error.message)", field: nil)
        }
        return .invalid(field, "\(field) is invalid: \(error.message)")
    }
}
