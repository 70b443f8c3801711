import Foundation

/// A UUID that the API writes in lowercase, RFC 9562's output form (JSONEncoder writes `uuidString`, uppercase),
/// and reads in either case.
@propertyWrapper
public struct LowercasedUUID: Codable, Sendable, Hashable {
    public var wrappedValue: UUID

    public init(wrappedValue: UUID) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(UUID.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.lowercasedString)
    }
}

/// A list of UUIDs that the API writes in lowercase (as `LowercasedUUID`), and reads in either case.
@propertyWrapper
public struct LowercasedUUIDs: Codable, Sendable, Hashable {
    public var wrappedValue: [UUID]

    public init(wrappedValue: [UUID]) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode([UUID].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.map(\.lowercasedString))
    }
}
