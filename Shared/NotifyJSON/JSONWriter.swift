import Foundation
import NotifyAPI

/// Appends compact JSON to a byte buffer without going through `Codable`;
/// used on the per-push hot path where JSONEncoder's allocations dominate. Inlinable: its callers (the payload
/// builders, ingest's answers) are in other modules, and a call per key and value across a module boundary cost the
/// payload builders 2-20 % (docs/benchmarks-history.md, "2026-11-24, cc2c920").
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]
    /// Whether the open container already holds a value (the next one needs a comma); that flag of each
    /// enclosing container is kept on a stack touched only when a container begins or ends.
    @usableFromInline var needsComma = false
    @usableFromInline var enclosingNeedsComma: [Bool] = []

    @inlinable public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public mutating func beginObject() {
        begin(UInt8(ascii: "{"))
    }

    @inlinable public mutating func endObject() {
        end(UInt8(ascii: "}"))
    }

    @inlinable public mutating func beginArray() {
        begin(UInt8(ascii: "["))
    }

    @inlinable public mutating func endArray() {
        end(UInt8(ascii: "]"))
    }

    /// Writes an object key; the next value written belongs to it.
    @inlinable public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    @inlinable public mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    @inlinable public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    @inlinable public mutating func integer(_ value: Int64) {
        separate()
        value.appendDecimal(to: &bytes)
    }

    /// A UUID as its 8-4-4-4-12 string in lowercase (what `uuidString.lowercased()` gives, the API's form), without
    /// formatting a String.
    @inlinable public mutating func uuid(_ value: UUID) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        value.appendString(to: &bytes, uppercase: false)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A timestamp in the wire format (`WireCoding.formatTimestamp`): `"2026-01-31T12:00:00.000Z"`.
    @inlinable public mutating func timestamp(_ date: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        WireTimestamp.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `json`, a complete JSON value written before (e.g. a string escaped once for many messages).
    @inlinable public mutating func rawValue(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    @inlinable public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    @inlinable public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    @inlinable public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 {
                integer(Int64(number))
            } else {
                separate()
                bytes.append(contentsOf: "\(number)".utf8)
            }
        case .string(let text): string(text)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                key(name)
                self.value(member)
            }
            endObject()
        }
    }

    @inlinable mutating func begin(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        enclosingNeedsComma.append(needsComma)
        needsComma = false
    }

    @inlinable mutating func end(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = enclosingNeedsComma.removeLast()
    }

    /// A comma before every value of a container but its first (none between values outside any container).
    @inlinable mutating func separate() {
        if needsComma {
            bytes.append(UInt8(ascii: ","))
        } else if !enclosingNeedsComma.isEmpty {
            needsComma = true
        }
    }

    /// Copies the runs of bytes that need no escaping in one go: most strings have none. Eight bytes are tested at
    /// once, and only a word holding a byte to escape is gone through byte by byte.
    @inlinable mutating func appendString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let wordEnd = index + 8
                if wordEnd <= utf8.count, !JSONStringWords.hasQuoteBackslashOrControl(JSONStringWords.word(raw, at: index)) {
                    index = wordEnd
                    continue
                }
                for position in index..<min(wordEnd, utf8.count) {
                    let byte = utf8[position]
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                    appendEscaped(byte)
                    runStart = position + 1
                }
                index = wordEnd
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    @inlinable mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            bytes.append(0x5C)
            bytes.append(byte)
        case 0x0A:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "n"))
        case 0x0D:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "r"))
        case 0x09:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "t"))
        default:
            for escaped in [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")] as [UInt8] { bytes.append(escaped) }
            bytes.append(HexDigits.lowercase[Int(byte >> 4)])
            bytes.append(HexDigits.lowercase[Int(byte & 0xF)])
        }
    }
}
