/// A request that cannot be accepted, naming the field that is wrong.
///
/// Rendered to clients as `{"error": {"code", "message", "field"}}`.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Machine-readable reason, e.g. `invalid_field`, `missing_field`, `payload_too_large`.
    public var code: String
    public var message: String
    /// The JSON path of the offending field, e.g. `payload.visualContent.title`.
    public var field: String?

    public init(code: String, message: String, field: String?) {
        self.code = code
        self.message = message
        self.field = field
    }

    public static func missing(_ field: String) -> ValidationError {
        ValidationError(code: "missing_field", message: "\(field) is required", field: field)
    }

    public static func invalid(_ field: String, _ message: String) -> ValidationError {
        ValidationError(code: "invalid_field", message: message, field: field)
    }

    public var description: String {
        if let field { return "\(code) (\(field)): \(message)" }
        return "\(code): \(message)"
    }
}
