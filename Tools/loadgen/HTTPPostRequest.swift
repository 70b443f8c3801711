import NIOCore

/// The bytes of one HTTP/1.1 `POST` of a JSON body to a fixed path with a bearer token: the request line and the
/// fixed header fields are written once, so each request is that prefix, the body's length and the body.
struct HTTPPostRequest: Sendable {
    /// Everything up to and including `Content-Length: `.
    private let head: [UInt8]

    /// Throws when a value cannot go into a request line or header field (a control character or a space).
    init(endpoint: PlainHTTPEndpoint, path: String, bearer: String) throws {
        let values = [endpoint.basePath + path, endpoint.authority, bearer]
        guard values.allSatisfy({ $0.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F } }) else {
            throw LoadGenError("cannot send \(path) with that URL or API key: it holds spaces or control characters")
        }
        var head: [UInt8] = []
        head.append(contentsOf: "POST \(values[0]) HTTP/1.1\r\n".utf8)
        head.append(contentsOf: "Host: \(values[1])\r\n".utf8)
        head.append(contentsOf: "Authorization: Bearer \(values[2])\r\n".utf8)
        head.append(contentsOf: "Content-Type: application/json\r\n".utf8)
        head.append(contentsOf: "Content-Length: ".utf8)
        self.head = head
    }

    /// The whole request carrying `body`.
    func bytes(body: [UInt8], allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: head.count + 24 + body.count)
        buffer.writeBytes(head)
        buffer.writeString(String(body.count))
        buffer.writeStaticString("\r\n\r\n")
        buffer.writeBytes(body)
        return buffer
    }
}
