import Foundation

/// Where notifyctl writes, unbuffered: lines and answers on stdout, `error:` lines on stderr.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// A JSON answer exactly as it came (a newline added if it has none); an empty answer prints nothing.
    static func answer(_ body: Data) {
        guard !body.isEmpty else { return }
        FileHandle.standardOutput.write(body.last == UInt8(ascii: "\n") ? body : body + Data("\n".utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }
}

extension ServiceOptions {
    /// Prints `answer` as it came under --json; otherwise reads it as `Value` and hands it to `human`.
    func present<Value: Decodable>(_ answer: ServiceAnswer, as type: Value.Type, human: (Value) -> Void) throws {
        if json {
            Output.answer(answer.body)
        } else {
            human(try answer.decode(type))
        }
    }
}
