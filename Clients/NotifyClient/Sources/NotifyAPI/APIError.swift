/// The error body of every HTTP answer and AMQP reply: `{"error": {"code", "message", "field"}}`.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        public var field: String?
    }

    public var error: Detail

    public init(code: String, message: String, field: String? = nil) {
        error = Detail(code: code, message: message, field: field)
    }

    public init(_ validation: ValidationError) {
        self.init(code: validation.code, message: validation.message, field: validation.field)
    }
}
