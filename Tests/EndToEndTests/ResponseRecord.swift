import Foundation

/// Ingest's answers to the tests, one JSON line each in `$NOTIFY_STATE_DIR/responses/<pid>.jsonl`: test.sh validates
/// them against Services/ingest/openapi.yaml at the end (Python/validate_responses.py). Nothing without NOTIFY_STATE_DIR.
enum ResponseRecord {
    private struct Line: Encodable {
        var method: String
        var path: String
        var query: String?
        var status: Int
        var contentType: String?
        /// The body as text, or `bodyBase64` when it is not UTF-8.
        var body: String?
        var bodyBase64: String?
    }

    /// The process's file (private: bodies hold new API keys), opened once for appending; nil without NOTIFY_STATE_DIR.
    private static let file: Int32? = {
        guard let directory = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] else { return nil }
        let responses = directory + "/responses"
        try? FileManager.default.createDirectory(atPath: responses, withIntermediateDirectories: true)
        let file = open("\(responses)/\(getpid()).jsonl", O_WRONLY | O_APPEND | O_CREAT, 0o600)
        return file >= 0 ? file : nil
    }()

    private static let ingestPrefix = Stack.ingestURL + "/"

    /// Appends the answer if `url` is the stack's ingest (the sandbox's and other servers' answers are left out).
    static func append(_ method: StackClient.Method, _ url: String, status: Int, contentType: String?, body: Data) {
        guard url.hasPrefix(ingestPrefix), let file, let components = URLComponents(string: url) else { return }
        let text = String(data: body, encoding: .utf8)
        let line = Line(
            method: method.rawValue, path: components.percentEncodedPath, query: components.percentEncodedQuery, status: status,
            contentType: contentType, body: text, bodyBase64: text == nil ? body.base64EncodedString() : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(line) else { return }
        // One append-mode write per answer: lines of tests running side by side do not interleave.
        _ = (json + [UInt8(ascii: "\n")]).withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }
}
