import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyOutbound

/// A token endpoint's refusal (or silence) when asked for an access token.
struct AccessTokenFailure: Error {
    var answer: ProviderAnswer

    /// Refused credentials (`invalid_grant`, `invalid_client`, ...) are the app's to fix; the rest passes.
    var action: PushAction {
        switch answer {
        case .rejected(let status, _, let retryAfter) where status == 429 || status >= 500: return .retry(after: retryAfter)
        case .rejected: return .credentials
        case .notAllowed: return .credentials
        case .accepted, .unreachable: return .retry(after: nil)
        }
    }

    var verdict: PushVerdict {
        PushVerdict(action: action, status: answer.status, reason: "access token: \(answer.reason ?? "not granted")")
    }
}

/// The OAuth 2.0 token request (RFC 6749 §4.4 client credentials, RFC 7523 JWT bearer): a form POST answered
/// by `{"access_token", "expires_in", "token_type"}` or `{"error", "error_description"}`.
enum OAuthTokenRequest {
    private struct Granted: Decodable {
        var accessToken: String
        var expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", expiresIn = "expires_in"
        }
    }

    private struct Refused: Decodable {
        var error: String
        var description: String?

        enum CodingKeys: String, CodingKey {
            case error, description = "error_description"
        }
    }

    static func exchange(url: String, form: [(name: String, value: String)], on client: OutboundHTTPClient) async throws(AccessTokenFailure) -> AccessToken {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: form.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")))
        let (answer, body) = await ProviderAnswer.send(request, on: client) { response, body in
            guard let refused = try? JSONDecoder().decode(Refused.self, from: Data(buffer: body)) else { return "HTTP \(response.status.code)" }
            return [refused.error, refused.description].compactMap { $0 }.joined(separator: ": ")
        }
        guard case .accepted = answer else { throw AccessTokenFailure(answer: answer) }
        guard let granted = try? JSONDecoder().decode(Granted.self, from: Data(buffer: body)), granted.expiresIn > 0 else {
            throw AccessTokenFailure(answer: .unreachable("the token endpoint answered no access token"))
        }
        return AccessToken(value: granted.accessToken, expiresIn: granted.expiresIn)
    }

    /// `application/x-www-form-urlencoded` escaping: everything but RFC 3986's unreserved characters.
    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }
}
