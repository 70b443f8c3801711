/// The parameters of a device's membership in an event source (MobileFirst's "custom subscription parameters"): an
/// object of up to 20 scalar values (strings of at most 256 bytes, numbers, booleans) set on a join or an enrolment,
/// listed with the membership, and matched by a broadcast's `where`.
public enum MembershipParameters {
    /// Keys (1 to 64 bytes) in a membership's parameters.
    public static let maximumKeys = 20
    /// Pairs in a publish's `where`.
    public static let maximumConditions = 10

    /// Checks `object` (parameters, or a publish's `where`), naming `field.key` when a value is not one of the
    /// scalars a parameter may hold.
    public static func validate(_ object: [String: JSONValue], field: String, maximumKeys: Int) throws(ValidationError) {
        if object.count > maximumKeys { throw .invalid(field, "\(field) holds at most \(maximumKeys) parameters") }
        for key in object.keys.sorted() {
            guard (1...64).contains(key.utf8.count) else { throw .invalid(field, "a parameter's name is 1 to 64 bytes") }
            switch object[key] {
            case .string(let text) where text.utf8.count <= 256: continue
            case .bool, .number: continue
            default: throw .invalid("\(field).\(key)", "a parameter is a string of at most 256 bytes, a number or a boolean")
            }
        }
    }
}

/// The body of a join or an enrolment (`PUT …/event-sources/{name}`), which may be empty.
public struct MembershipRequest: Codable, Sendable, Equatable {
    /// Replaces the device's parameters in the source when given; left out, they stay as they were.
    public var parameters: [String: JSONValue]?

    public init(parameters: [String: JSONValue]? = nil) {
        self.parameters = parameters
    }
}
