import Foundation
import NotifyAPI

/// This device's registration with the service, as the client stores it.
public struct Subscription: Codable, Sendable, Equatable {
    public var id: UUID
    public var expirationDateTime: Date
    public var platform: Platform
    public var pushToken: String
    public var appPackage: String?
    public var displayName: String?
}
