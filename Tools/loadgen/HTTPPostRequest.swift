import NIOCore
import NIOHTTP1

/// An HTTP/1.1 `POST` of a JSON body to a fixed path with a bearer token: the request head's fixed fields are built
/// once, and each request adds only its body's length.
struct HTTPPostRequest: Sendable {
    private let head: HTTPRequestHead

    /// Throws when a value cannot go into a request line or header field (a control character or a space).
    init(endpoint: PlainHTTPEndpoint, path: String, bearer: String) throws {
        let values = [endpoint.basePath + path, endpoint.authority, bearer]
        guard values.allSatisfy({ $0.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F } }) else {
            throw LoadGenError("cannot send \(path) with that URL or API key: it holds spaces or control characters")
        }
        let headers: HTTPHeaders = [
            "Host": values[1], "Authorization": "Bearer \(values[2])", "Content-Type": "application/json",
        ]
        head = HTTPRequestHead(version: .http1_1, method: .POST, uri: values[0], headers: headers)
    }

    /// The head of the request carrying `bodyLength` bytes.
    func head(bodyLength: Int) -> HTTPRequestHead {
        var head = self.head
        head.headers.add(name: "Content-Length", value: String(bodyLength))
        return head
    }
}
