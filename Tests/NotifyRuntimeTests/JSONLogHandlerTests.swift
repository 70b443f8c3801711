import Foundation
import Logging
import NotifyModels
import NotifyRuntime
import Synchronization
import Testing

/// NotifyRuntime's logging: the lines `JSONLogHandler` writes (`LOG_FORMAT=json`), and the metadata naming a notification.
@Suite struct JSONLogHandlerTests {
    /// Collects the lines a handler writes.
    private final class Lines: Sendable {
        private let lines = Mutex<[[UInt8]]>([])
        var all: [[UInt8]] { lines.withLock { $0 } }
        func append(_ line: [UInt8]) { lines.withLock { $0.append(line) } }
    }

    private struct Refusal: Error, CustomStringConvertible {
        var description: String { "refused \"here\"" }
    }

    private static func logger(
        _ lines: Lines, level: Logger.Level = .info, metadata: Logger.Metadata = [:], provider: Logger.MetadataProvider? = nil
    ) -> Logger {
        var handler = JSONLogHandler(label: "push-dispatch", metadataProvider: provider, output: lines.append)
        handler.logLevel = level
        handler.metadata = metadata
        return Logger(label: "push-dispatch") { _ in handler }
    }

    private static func object(_ line: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    @Test("an entry is one JSON line: time, level, service, message, then each metadata item as a field, escaped")
    func entry() throws {
        let lines = Lines()
        let id = UUID()
        let quoted = "say \"hi\" \\ back\nnext\tline\r\u{1}end"
        let unicode = "Grüße 🙂 \u{2028} 日本"
        Self.logger(lines).info("push \"answered\"\n", metadata: [
            "notificationId": .id(id), "quoted": .string(quoted), "unicode": .string(unicode), "count": .stringConvertible(42),
            "nested": ["list": ["a", .stringConvertible(7)], "inner": ["key": "value"]], "message": "not the message",
        ])
        let line = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        #expect(line.last == UInt8(ascii: "\n") && line.filter { $0 == UInt8(ascii: "\n") }.count == 1, "one line, newline escaped inside")
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix(#"{"time":""#) && text.contains(#"\u0001"#) && text.contains(#"\"hi\" \\ back\nnext\tline\r"#))
        let object = try Self.object(line)
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(time)")
        let parsed = try #require(try? Date(time, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
        #expect(abs(parsed.timeIntervalSinceNow) < 5)
        #expect(object["level"] as? String == "info")
        #expect(object["service"] as? String == "push-dispatch")
        #expect(object["message"] as? String == "push \"answered\"\n")
        #expect(object["metadata.message"] as? String == "not the message")
        #expect(object["notificationId"] as? String == id.uuidString.lowercased())
        #expect(object["quoted"] as? String == quoted)
        #expect(object["unicode"] as? String == unicode)
        #expect(object["count"] as? String == "42")
        let nested = try #require(object["nested"] as? [String: Any])
        #expect(nested["list"] as? [String] == ["a", "7"])
        #expect(nested["inner"] as? [String: String] == ["key": "value"])
    }

    @Test("entries below the level are not written")
    func levels() throws {
        let lines = Lines()
        var logger = Self.logger(lines, level: .info)
        logger.trace("trace")
        logger.debug("debug")
        #expect(lines.all.isEmpty)
        logger.notice("notice")
        logger.logLevel = .debug
        logger.debug("debug")
        #expect(try lines.all.map { try Self.object($0)["level"] as? String } == ["notice", "debug"])
    }

    @Test("an entry's metadata wins over the provider's, which wins over the logger's, each key written once; an error adds its fields")
    func precedence() throws {
        let lines = Lines()
        let logger = Self.logger(
            lines, metadata: ["a": "logger", "b": "logger", "c": "logger"], provider: .init { ["b": "provider", "c": "provider"] })
        logger.error("failed", error: Refusal(), metadata: ["c": "entry", "error.message": "replaced"])
        let line = try #require(lines.all.first)
        let object = try Self.object(line)
        #expect(object["a"] as? String == "logger")
        #expect(object["b"] as? String == "provider")
        #expect(object["c"] as? String == "entry")
        #expect(object["error.message"] as? String == #"refused "here""#)
        #expect((object["error.type"] as? String)?.hasSuffix("Refusal") == true)
        let text = String(decoding: line, as: UTF8.self)
        for key in ["a", "b", "c", "error.message"] {
            #expect(text.ranges(of: "\"\(key)\":").count == 1, "\(key) written once")
        }
    }

    @Test("LOG_FORMAT is text unless set to json; any other value fails at start-up")
    func format() throws {
        #expect(try ServiceEnvironment([.logFormat], environment: [:]).string(.logFormat) == "text")
        #expect(try ServiceEnvironment([.logFormat], environment: ["LOG_FORMAT": "json"]).string(.logFormat) == "json")
        #expect(throws: ConfigurationError.self) { try ServiceEnvironment([.logFormat], environment: ["LOG_FORMAT": "JSON"]) }
    }

    @Test("a storage command's log metadata names its notification, in lowercase, where it concerns one")
    func commandMetadata() {
        let id = UUID()
        let change = StorageCommand(action: .changeNotificationState(NotificationStateChange(
            appId: "app", userId: "u", notificationId: id, readState: .read, userActionState: nil, delete: false,
            originSubscriptionId: nil, requestedAt: Date())))
        #expect(change.logMetadata["notificationId"] == .string(id.uuidString.lowercased()))
        #expect(change.logMetadata["commandId"] == .string(change.commandId.uuidString.lowercased()))
        let other = StorageCommand(action: .deleteApp(appId: "app"))
        #expect(other.notificationId == nil && other.logMetadata["notificationId"] == nil)
    }
}
