import Foundation
import HTTPTypes
import Hummingbird

extension Request {
    /// The body, read up to one byte past `limit`: enough to tell it is too large.
    func bodyBytes(limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in body {
            bytes.append(contentsOf: buffer.readableBytesView.prefix(limit + 1 - bytes.count))
            if bytes.count > limit { break }
        }
        return bytes
    }

    /// An `application/x-www-form-urlencoded` body (OAuth token requests); nil if it is not one.
    func form<Form: Decodable>(_ type: Form.Type, limit: Int) async throws -> Form? {
        guard headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false else {
            return nil
        }
        let bytes = try await bodyBytes(limit: limit)
        guard bytes.count <= limit else { return nil }
        return try? URLEncodedFormDecoder().decode(type, from: String(decoding: bytes, as: UTF8.self))
    }
}
