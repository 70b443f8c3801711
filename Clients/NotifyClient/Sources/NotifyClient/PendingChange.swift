import Foundation
import NotifyAPI

/// A state change or deletion made on this device and not yet acknowledged by the service.
struct PendingChange: Codable, Sendable, Equatable {
    var id = UUID()
    var notificationId: UUID
    /// The states to set; nil for a deletion.
    var states: StateChangeRequest?
}
