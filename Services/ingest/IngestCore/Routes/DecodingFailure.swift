import NotifyModels

/// Turns `DecodingError` into a `ValidationError` naming the JSON path of the bad field.
enum DecodingFailure {
    static func validationError(_ error: DecodingError) -> ValidationError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missing(path(context.codingPath + [key]))
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = path(context.codingPath)
            return .invalid(field, "\(field.isEmpty ? "the body" : field) has the wrong type or value")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ValidationError(code: "invalid_json", message: "the body is not valid JSON", field: nil)
            }
            let field = path(context.codingPath)
            // Foundation's own descriptions name Swift types ("Cannot initialize Platform from invalid String value x").
            if context.debugDescription.hasPrefix("Cannot initialize") {
                return .invalid(field, "\(field) is not one of the accepted values")
            }
            return .invalid(field, "\(field) is invalid: \(context.debugDescription)")
        @unknown default:
            return ValidationError(code: "invalid_json", message: "the body could not be read", field: nil)
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}
