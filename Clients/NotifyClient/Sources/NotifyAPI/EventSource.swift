import Foundation

/// Who may put devices in an event source.
public enum EventSourcePolicy: String, Codable, Sendable, CaseIterable {
    /// Any user may subscribe their own devices (and the app server may enrol any).
    case open
    /// Only the app server enrols devices; a user may still leave.
    case appServer
}

/// An event source as the app server defines it (`POST /v1/apps/{appId}/event-sources`).
public struct EventSourceRequest: Codable, Sendable, Equatable {
    /// 1 to 100 characters of `A-Z a-z 0-9 . _ : -`.
    public var name: String?
    /// Default `open`.
    public var policy: EventSourcePolicy?
    public var description: String?

    public init(name: String? = nil, policy: EventSourcePolicy? = nil, description: String? = nil) {
        self.name = name
        self.policy = policy
        self.description = description
    }

    /// Whether `name` can name an event source.
    public static func isValidName(_ name: String) -> Bool {
        (1...100).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
            }
    }

    /// The name, policy and description, checked; the field named when one is wrong.
    public func validated() throws(ValidationError) -> (name: String, policy: EventSourcePolicy, description: String?) {
        guard let name else { throw .missing("name") }
        guard Self.isValidName(name) else { throw .invalid("name", "name is 1 to 100 characters of A-Z a-z 0-9 . _ : -") }
        if let description, description.utf8.count > 1000 { throw .invalid("description", "description may be at most 1000 bytes") }
        return (name, policy ?? .open, description)
    }
}

/// An event source with its audience.
public struct EventSourceView: Codable, Sendable, Equatable {
    public var name: String
    public var policy: EventSourcePolicy
    public var description: String?
    /// Devices (subscriptions) in it, and the users they belong to.
    public var memberDevices: Int
    public var memberUsers: Int
    public var createdAt: Date

    public init(name: String, policy: EventSourcePolicy, description: String?, memberDevices: Int, memberUsers: Int, createdAt: Date) {
        self.name = name
        self.policy = policy
        self.description = description
        self.memberDevices = memberDevices
        self.memberUsers = memberUsers
        self.createdAt = createdAt
    }
}

/// Whether a user's devices are in an event source (`GET /v1/apps/{appId}/users/{userId}/event-sources/{name}`).
public struct EventSourceMembership: Codable, Sendable, Equatable {
    public var eventSource: String
    public var subscribed: Bool
    /// The user's devices in it.
    @LowercasedUUIDs public var subscriptionIds: [UUID]
    /// The membership's parameters: those of the user's device that joined last (each device keeps its own).
    public var parameters: [String: JSONValue]?

    public init(eventSource: String, subscribed: Bool, subscriptionIds: [UUID], parameters: [String: JSONValue]? = nil) {
        self.eventSource = eventSource
        self.subscribed = subscribed
        self.subscriptionIds = subscriptionIds
        self.parameters = parameters
    }
}
