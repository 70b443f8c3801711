import ArgumentParser
import Foundation
import NotifyModels

/// Wrong usage, found by a command's own checks: the argument parser prints it with the usage and exits 64
/// (spelled out because NotifyAPI has a `ValidationError` of its own).
typealias UsageError = ArgumentParser.ValidationError

/// Why a command failed, as its user sees it: the text printed after `error: ` on stderr, and the exit status
/// (`NotifyCtlCommand`'s discussion lists them).
struct CommandFailure: Error {
    var message: String
    var exitStatus: Int32
    /// The service's answer, printed on stdout as it came (under --json).
    var answer: Data?

    /// The service or the broker refused the request: exit status 1.
    static func refused(_ message: String, answer: Data? = nil) -> CommandFailure {
        CommandFailure(message: message, exitStatus: 1, answer: answer)
    }

    /// The service or the broker is unavailable, or answered what notifyctl cannot read: exit status 3.
    static func unavailable(_ message: String, answer: Data? = nil) -> CommandFailure {
        CommandFailure(message: message, exitStatus: 3, answer: answer)
    }

    /// What a non-2xx answer of the service means: a 4xx is a refusal, anything else unavailability; the message is
    /// read from the service's `{"error": {"code", "message", "field"}}`.
    static func answered(status: Int, body: Data, echoing: Bool) -> CommandFailure {
        let message: String
        if let error = try? JSONDecoder().decode(APIErrorBody.self, from: body) {
            message = describe(error.error)
        } else {
            message = "HTTP \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
        let answer = echoing ? body : nil
        return (400..<500).contains(status) ? .refused(message, answer: answer) : .unavailable(message, answer: answer)
    }

    /// `code: message (field: field)`, the field left out when the error names none.
    static func describe(_ error: APIErrorBody.Detail) -> String {
        guard let field = error.field else { return "\(error.code): \(error.message)" }
        return "\(error.code): \(error.message) (field: \(field))"
    }
}
