import Foundation
import NotifyAMQP
import NotifyModels
import SwiftProtobuf

/// The internal queue formats: protobuf messages (Protos/), binary on the wire, with a schema version.
///
/// A message's `content_type` says its form: `application/x-protobuf` (this schema, version `schemaVersion`) or
/// `application/json` / none (the JSON form written before it, schema version 1, read until 2027-01-31 so a
/// rolling deploy strands nothing). README.md beside this file holds the rules for changing the schema.
public enum WireFormat {
    /// The schema version this build writes and the newest it reads (it also reads version 1, the JSON form).
    public static let schemaVersion: UInt32 = 2
    /// The content type of every internal message this build writes.
    public static let contentType = "application/x-protobuf"
    /// The content type of the JSON form (schema version 1).
    public static let legacyJSONContentType = "application/json"
}

/// A message that could not be read; its description names what was wrong and never carries the message's bytes.
public struct WireDecodingError: Error, CustomStringConvertible, Equatable {
    /// What kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String { case malformed, unsupportedSchemaVersion, unsupportedContentType }
        let base: Base
        /// The bytes are not a message of the expected type, or a field holds a value outside its domain.
        public static let malformed = Code(base: .malformed)
        /// The message is of a schema version this build does not read.
        public static let unsupportedSchemaVersion = Code(base: .unsupportedSchemaVersion)
        /// The content type is neither protobuf nor the legacy JSON form.
        public static let unsupportedContentType = Code(base: .unsupportedContentType)
        public var description: String { base.rawValue }
    }

    public var code: Code
    /// The message type and what was wrong, e.g. "PushJobBatch: groups[0].targets[2].push_id is not 16 bytes".
    public var detail: String

    init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}

/// An internal queue message: a batch type of NotifyModels with its protobuf form.
public protocol WireMessage: Sendable {
    /// The protobuf form.
    func wireBytes() -> Data
    /// Reads the protobuf form.
    init(wireBytes: Data) throws(WireDecodingError)
    /// Reads the JSON form of schema version 1 (the same type's Codable form).
    init(legacyJSON: Data) throws(WireDecodingError)
}

extension WireMessage {
    /// Reads a message whose form its content type names.
    public init(body: Data, contentType: String?) throws(WireDecodingError) {
        switch contentType.map(WireContentType.init) ?? .legacyJSON {
        case .protobuf: try self.init(wireBytes: body)
        case .legacyJSON: try self.init(legacyJSON: body)
        case .other(let type): throw WireDecodingError(.unsupportedContentType, "\(Self.self): content type \(type)")
        }
    }

    /// Reads a delivery from a queue.
    public init(_ delivery: AMQPDelivery) throws(WireDecodingError) {
        try self.init(body: delivery.body, contentType: delivery.properties.contentType)
    }
}

extension WireMessage where Self: Decodable {
    public init(legacyJSON: Data) throws(WireDecodingError) {
        do {
            self = try WireCoding.makeDecoder().decode(Self.self, from: legacyJSON)
        } catch {
            throw WireDecodingError(.malformed, "\(Self.self) (JSON, schema version 1): \(error)")
        }
    }
}

extension AMQPOutboundMessage {
    /// A persistent message carrying `message` in the wire format.
    public init(exchange: String = "", routingKey: String, wire message: some WireMessage, properties: AMQPProperties = AMQPProperties()) {
        var properties = properties
        properties.contentType = WireFormat.contentType
        self.init(exchange: exchange, routingKey: routingKey, body: message.wireBytes(), properties: properties)
    }
}

/// The form a content type names (parameters after `;` are ignored).
enum WireContentType: Equatable {
    case protobuf, legacyJSON, other(String)

    init(_ value: String) {
        // What every message of this build says, recognised without splitting and lowercasing it.
        if value == WireFormat.contentType {
            self = .protobuf
            return
        }
        let type = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch type {
        case WireFormat.contentType, "application/protobuf": self = .protobuf
        case WireFormat.legacyJSONContentType, "": self = .legacyJSON
        default: self = .other(value)
        }
    }
}

/// Reads a top-level protobuf message and checks its schema version.
func readVersioned<M: SwiftProtobuf.Message>(_ type: M.Type, from bytes: Data, name: String, version: (M) -> UInt32) throws(WireDecodingError) -> M {
    let message: M
    do {
        message = try M(serializedBytes: bytes)
    } catch {
        throw WireDecodingError(.malformed, "\(name): \(error)")
    }
    // An absent version (0) reads as this one.
    let found = version(message)
    guard found <= WireFormat.schemaVersion else {
        throw WireDecodingError(
            .unsupportedSchemaVersion, "\(name): schema version \(found) is newer than this build reads (\(WireFormat.schemaVersion))")
    }
    return message
}

/// Serialises a message built in memory (it cannot fail: no required fields, no Any).
func serialized(_ message: some SwiftProtobuf.Message) -> Data {
    // swift-protobuf throws only for missing required fields (proto2) or unresolvable Any types, neither used here.
    try! message.serializedData()
}
