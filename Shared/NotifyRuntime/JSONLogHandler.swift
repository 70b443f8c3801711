import Foundation
import Logging
import NotifyJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes each entry as one JSON object on a line (`LOG_FORMAT=json`): `time` (UTC, ISO 8601 with milliseconds),
/// `level`, `service` (the logger's label), `message`, then each metadata item as a field of its own, nested metadata
/// as objects and arrays. A metadata key that is one of those four is written as `metadata.<key>`.
///
/// Written by hand with `JSONWriter`: one buffer per entry, and no merged metadata dictionary (the entry's own items
/// win over the metadata provider's, which win over the logger's, as in swift-log's `StreamLogHandler`).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable ([UInt8]) -> Void

    /// `output` gets each entry as one line, newline included; by default it goes to standard error.
    public init(
        label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider,
        output: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.writeToStandardError
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("time")
        writer.timestamp(Date())
        writer.key("level")
        writer.string(event.level.rawValue)
        writer.key("service")
        writer.string(label)
        writer.key("message")
        writer.string(event.message.description)
        let explicit = event.metadata ?? [:]
        let provided = metadataProvider?.get() ?? [:]
        let error = event.error
        // The error's fields replace items of the same name, as in `StreamLogHandler`.
        func replacedByError(_ key: String) -> Bool {
            error != nil && (key == "error.message" || key == "error.type")
        }
        for (key, value) in explicit where !replacedByError(key) {
            Self.field(key, value, to: &writer)
        }
        for (key, value) in provided where explicit[key] == nil && !replacedByError(key) {
            Self.field(key, value, to: &writer)
        }
        for (key, value) in metadata where explicit[key] == nil && provided[key] == nil && !replacedByError(key) {
            Self.field(key, value, to: &writer)
        }
        if let error {
            Self.field("error.message", .string("\(error)"), to: &writer)
            Self.field("error.type", .string(String(reflecting: type(of: error))), to: &writer)
        }
        writer.endObject()
        writer.bytes.append(UInt8(ascii: "\n"))
        output(writer.bytes)
    }

    private static func field(_ key: String, _ value: Logger.MetadataValue, to writer: inout JSONWriter) {
        switch key {
        case "time", "level", "service", "message": writer.key("metadata." + key)
        default: writer.key(key)
        }
        append(value, to: &writer)
    }

    private static func append(_ value: Logger.MetadataValue, to writer: inout JSONWriter) {
        switch value {
        case .string(let text):
            writer.string(text)
        case .stringConvertible(let convertible):
            writer.string(convertible.description)
        case .dictionary(let members):
            writer.beginObject()
            for (key, member) in members {
                writer.key(key)
                append(member, to: &writer)
            }
            writer.endObject()
        case .array(let items):
            writer.beginArray()
            for item in items { append(item, to: &writer) }
            writer.endArray()
        }
    }

    /// Writes a line to standard error with one `write(2)` (more only if the system takes part of it), so lines
    /// logged at the same time do not interleave.
    @Sendable public static func writeToStandardError(_ line: [UInt8]) {
        line.withUnsafeBytes { bytes in
            guard var next = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let written = write(STDERR_FILENO, next, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                next += written
                left -= written
            }
        }
    }
}
