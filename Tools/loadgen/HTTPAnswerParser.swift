import NotifyJSON
import NotifyModels

/// Finds one HTTP/1.1 answer in the bytes a connection has read so far: the status line, the header fields, and the
/// body framed as RFC 9112 §6.3 says (none for 204 and 304, else chunked transfer coding, Content-Length, or
/// everything up to the end of the connection). Interim 1xx answers before it are skipped. Only the status, the body
/// and whether the connection stays open are kept; every other header field is ignored.
enum HTTPAnswerParser {
    /// One complete answer.
    struct Answer: Equatable {
        var status: Int
        var body: [UInt8]
        /// How many of the bytes it took, interim answers included.
        var length: Int
        /// The connection ends after it: `Connection: close`, HTTP/1.0 without keep-alive, or a body read to the end.
        var closesConnection: Bool
    }

    enum Reading: Equatable {
        /// Not the whole answer yet: read more.
        case incomplete
        case answer(Answer)
        /// Not an HTTP/1.x answer, framing that cannot be followed, or more than `maximumHead` or `maximumBody`
        /// bytes; the connection is of no further use.
        case malformed(String)
    }

    static let maximumHead = 64 << 10
    static let maximumBody = 64 << 20

    /// Reads the answer at the start of `bytes`. `atEnd`: the connection closed after them, which completes a body
    /// framed by the end of the connection (and nothing else).
    static func parse(_ bytes: UnsafeRawBufferPointer, atEnd: Bool = false) -> Reading {
        var start = 0
        while true {
            let head: Head
            switch readHead(bytes, from: start) {
            case .incomplete:
                return bytes.count - start > maximumHead ? .malformed("header section larger than \(maximumHead) bytes") : .incomplete
            case .malformed(let reason): return .malformed(reason)
            case .head(let read): head = read
            }
            if head.status == 101 { return .malformed("unexpected 101 Switching Protocols") }
            if head.status < 200 {
                start = head.end
                continue
            }
            if head.status == 204 || head.status == 304 {
                return .answer(Answer(status: head.status, body: [], length: head.end, closesConnection: head.closesConnection))
            }
            switch (head.isChunked, head.contentLength) {
            case (true?, _):
                return readChunkedBody(bytes, from: head.end, status: head.status, closesConnection: head.closesConnection)
            case (nil, let contentLength?):
                guard contentLength <= maximumBody else { return .malformed("body larger than \(maximumBody) bytes") }
                guard bytes.count - head.end >= contentLength else { return .incomplete }
                return .answer(Answer(
                    status: head.status, body: [UInt8](bytes[head.end..<head.end + contentLength]), length: head.end + contentLength,
                    closesConnection: head.closesConnection))
            default:
                guard bytes.count - head.end <= maximumBody else { return .malformed("body larger than \(maximumBody) bytes") }
                guard atEnd else { return .incomplete }
                return .answer(Answer(status: head.status, body: [UInt8](bytes[head.end...]), length: bytes.count, closesConnection: true))
            }
        }
    }

    // MARK: Head

    /// What the status line and header fields say.
    private struct Head {
        var status: Int
        /// Offset of the first byte after the empty line ending the head.
        var end: Int
        var closesConnection: Bool
        var contentLength: Int?
        /// nil: no Transfer-Encoding; true: its last coding is chunked; false: another coding, the body ends with
        /// the connection.
        var isChunked: Bool?
    }

    private enum HeadReading {
        case incomplete
        case head(Head)
        case malformed(String)
    }

    private static func readHead(_ bytes: UnsafeRawBufferPointer, from start: Int) -> HeadReading {
        guard let statusLine = line(bytes, from: start) else { return .incomplete }
        let text = bytes[statusLine.range]
        // "HTTP/1.x SSS" and, if anything follows, a space and the reason phrase.
        guard text.count >= 12, equalsIgnoringCase(text.prefix(7), "http/1."), let minor = digit(text[text.startIndex + 7]),
            text[text.startIndex + 8] == UInt8(ascii: " "), text.count == 12 || text[text.startIndex + 12] == UInt8(ascii: " "),
            let status = number(text[(text.startIndex + 9)..<(text.startIndex + 12)]), (100...599).contains(status)
        else {
            return .malformed("not an HTTP/1.x status line")
        }
        var head = Head(status: status, end: statusLine.next, closesConnection: false, contentLength: nil, isChunked: nil)
        var (close, keepAlive) = (false, false)
        var position = statusLine.next
        while true {
            guard let field = line(bytes, from: position) else { return .incomplete }
            position = field.next
            if field.range.isEmpty { break }
            let fieldBytes = bytes[field.range]
            guard let colon = fieldBytes.firstIndex(of: UInt8(ascii: ":")) else { return .malformed("header field without a colon") }
            let name = fieldBytes[fieldBytes.startIndex..<colon]
            let value = trimmed(fieldBytes[(colon + 1)...])
            if equalsIgnoringCase(name, "content-length") {
                // A list of equal values ("12, 12") is one length; differing lengths make the framing unknowable.
                for item in value.split(separator: UInt8(ascii: ",")) {
                    guard let length = number(trimmed(item)), head.contentLength == nil || head.contentLength == length else {
                        return .malformed("invalid Content-Length")
                    }
                    head.contentLength = length
                }
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                if let last = value.split(separator: UInt8(ascii: ",")).last {
                    head.isChunked = equalsIgnoringCase(trimmed(last), "chunked")
                }
            } else if equalsIgnoringCase(name, "connection") {
                for token in value.split(separator: UInt8(ascii: ",")) {
                    close = close || equalsIgnoringCase(trimmed(token), "close")
                    keepAlive = keepAlive || equalsIgnoringCase(trimmed(token), "keep-alive")
                }
            }
        }
        // HTTP/1.0 closes unless the answer asks to stay open.
        head.closesConnection = close || (minor == 0 && !keepAlive)
        head.end = position
        return .head(head)
    }

    // MARK: Chunked bodies

    private static func readChunkedBody(_ bytes: UnsafeRawBufferPointer, from start: Int, status: Int, closesConnection: Bool) -> Reading {
        var body: [UInt8] = []
        var position = start
        while true {
            guard let sizeLine = line(bytes, from: position) else { return .incomplete }
            let sizeText = bytes[sizeLine.range].prefix { $0 != UInt8(ascii: ";") }
            guard let size = hexNumber(trimmed(sizeText)) else { return .malformed("invalid chunk size") }
            position = sizeLine.next
            if size == 0 { break }
            guard body.count + size <= maximumBody else { return .malformed("body larger than \(maximumBody) bytes") }
            guard bytes.count - position >= size else { return .incomplete }
            body.append(contentsOf: bytes[position..<position + size])
            position += size
            guard let end = line(bytes, from: position) else { return .incomplete }
            guard end.range.isEmpty else { return .malformed("chunk longer than its size") }
            position = end.next
        }
        // Trailer fields, up to an empty line.
        while true {
            guard let trailer = line(bytes, from: position) else { return .incomplete }
            position = trailer.next
            if trailer.range.isEmpty { break }
        }
        return .answer(Answer(status: status, body: body, length: position, closesConnection: closesConnection))
    }

    // MARK: Bytes

    /// The line starting at `start` without its LF or CRLF, and where the next one starts; nil before its LF arrived.
    private static func line(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (range: Range<Int>, next: Int)? {
        guard start < bytes.count, let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let end = newline > start && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        return (start..<end, newline + 1)
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var text = bytes
        while let first = text.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { text.removeFirst() }
        while let last = text.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { text.removeLast() }
        return text
    }

    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { expected in
            bytes.count == expected.count
                && zip(bytes, expected).allSatisfy { byte, lower in
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == lower : byte == lower
                }
        }
    }

    private static func digit(_ byte: UInt8) -> Int? {
        let value = byte &- UInt8(ascii: "0")
        return value < 10 ? Int(value) : nil
    }

    /// A decimal number of at most 18 digits.
    private static func number(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard let digit = digit(byte) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    /// A hexadecimal number of at most 15 digits.
    private static func hexNumber(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 15 else { return nil }
        var value = 0
        for byte in bytes {
            guard let nibble = byte.hexDigitValue else { return nil }
            value = value << 4 | Int(nibble)
        }
        return value
    }
}
