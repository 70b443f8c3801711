/// Notifications by how ingest answered them: accepted (202), refused by the app's rate limit (429) or because the
/// broker did not confirm in time (503), both with Retry-After and meaning "publish again later", and anything else.
struct AnswerCounts: Codable, Sendable {
    var accepted = 0
    var rateLimited = 0
    var unavailable = 0
    /// Every other answer by status ("400", "transport error", "202 with unreadable answer").
    var other: [String: Int] = [:]
    /// Notifications refused (429, 503) by an answer without Retry-After.
    var refusedWithoutRetryAfter = 0

    var refused: Int { rateLimited + unavailable }
    var failed: Int { other.values.reduce(0, +) }

    /// A status that refuses for now, telling the client when to try again.
    static func isRefusal(_ status: Int) -> Bool { status == 429 || status == 503 }

    /// The answers to the notifications of `sequences` that were sent.
    init(_ outcome: Publisher.Outcome, sequences: Range<Int>) {
        for seq in sequences where seq < outcome.sent {
            switch outcome.statuses[seq] {
            case 202: accepted += 1
            case 429: rateLimited += 1
            case 503: unavailable += 1
            case Publisher.Outcome.transportError: other["transport error", default: 0] += 1
            case Publisher.Outcome.unreadable: other["202 with unreadable answer", default: 0] += 1
            case let status: other[String(status), default: 0] += 1
            }
        }
        for answer in outcome.answers where sequences.contains(answer.first) && Self.isRefusal(answer.status) && !answer.retryAfter {
            refusedWithoutRetryAfter += answer.count
        }
    }

    /// "202: n, 429: n, 503: n" and the others, leaving out what is 0.
    var summary: String {
        let parts = [("202", accepted), ("429", rateLimited), ("503", unavailable)] + other.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let text = parts.filter { $0.1 > 0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ")
        return text.isEmpty ? "none" : text
    }
}
