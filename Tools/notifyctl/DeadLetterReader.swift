import Foundation
import NotifyModels
import NotifyWire

/// Reads a dead letter's body for people: as the message the queue it came from carries (the internal protobuf
/// messages through NotifyWire, in the form its content type names), shown as indented JSON.
enum DeadLetterReader {
    /// What the body is, and its content.
    struct Reading {
        var type: String
        var text: String
    }

    static func read(_ body: Data, contentType: String?, from queue: String) -> Reading {
        switch queue {
        case QueueNames.storageCommands: render(StorageCommandBatch.self, body, contentType)
        case QueueNames.fanoutChanges, QueueNames.fanoutBroadcasts: render(ChangeEventBatch.self, body, contentType)
        case QueueNames.pushFeedback: render(PushOutcomeBatch.self, body, contentType)
        case WebhookOutcomeBatch.queue: render(WebhookOutcomeBatch.self, body, contentType)
        case WebhookDelivery.queue: webhookDelivery(body, contentType)
        case _ where Platform.providers.contains(where: { provider in PushLane.allCases.contains { QueueNames.pushQueue(provider, lane: $0) == queue } }):
            render(PushJobBatch.self, body, contentType)
        case QueueNames.ingestQueue: Reading(type: "an app server's publish body", text: String(decoding: body, as: UTF8.self))
        default: Reading(type: contentType ?? "no content type", text: String(data: body, encoding: .utf8) ?? "base64 " + body.base64EncodedString())
        }
    }

    private static func render<Message: WireMessage & Encodable>(_ type: Message.Type, _ body: Data, _ contentType: String?) -> Reading {
        do {
            return Reading(type: "\(Message.self)", text: try indented(Message(body: body, contentType: contentType)))
        } catch {
            return Reading(type: "\(Message.self)", text: "cannot be read: \(error)")
        }
    }

    /// A webhook event, its data shown as the JSON it is (the type's own JSON form has it in base64).
    private static func webhookDelivery(_ body: Data, _ contentType: String?) -> Reading {
        do {
            let delivery = try WebhookDelivery(body: body, contentType: contentType)
            let data = (try? JSONDecoder().decode(JSONValue.self, from: delivery.data)) ?? .string(String(decoding: delivery.data, as: UTF8.self))
            let event: JSONValue = .object([
                "eventId": .string(delivery.eventId.uuidString.lowercased()), "appId": .string(delivery.appId), "type": .string(delivery.type),
                "createdAt": .string(WireCoding.formatTimestamp(delivery.createdAt)), "data": data,
            ])
            return Reading(type: "WebhookDelivery", text: try indented(event))
        } catch {
            return Reading(type: "WebhookDelivery", text: "cannot be read: \(error)")
        }
    }

    private static func indented(_ value: some Encodable) throws -> String {
        let encoder = WireCoding.makeEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
