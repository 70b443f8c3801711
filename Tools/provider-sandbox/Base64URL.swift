import Foundation

/// Base64url (RFC 4648 §5) without padding, as JWTs and Web Push keys use it.
enum Base64URL {
    /// The bytes `text` encodes; trailing `=` padding is tolerated.
    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.hasSuffix("=") { base64.removeLast() }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `byteCount` random bytes, encoded: for identifiers and secrets the sandbox hands out.
    static func random(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// A JWS in compact serialization (`header.claims.signature`), split and decoded but not verified.
struct CompactJWT {
    /// `header.claims` as sent: the bytes the signature covers.
    let signingInput: Data
    let signature: Data
    private let header: Data
    private let claims: Data

    init?(_ text: some StringProtocol) {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let header = Base64URL.decode(segments[0]),
            let claims = Base64URL.decode(segments[1]),
            let signature = Base64URL.decode(segments[2])
        else { return nil }
        self.signingInput = Data("\(segments[0]).\(segments[1])".utf8)
        self.signature = signature
        self.header = header
        self.claims = claims
    }

    func header<Header: Decodable>(as type: Header.Type) -> Header? {
        try? JSONDecoder().decode(type, from: header)
    }

    func claims<Claims: Decodable>(as type: Claims.Type) -> Claims? {
        try? JSONDecoder().decode(type, from: claims)
    }
}
