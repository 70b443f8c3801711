import NotifyModels

/// The stores held in memory, and storage's part played on them: `apply` writes what a storage command would have
/// written, so a route that sends a command and reads back what was stored works in-process.
public struct MemoryStorage: Sendable {
    public let notifications = MemoryNotificationStore()
    public let deliveryLog = MemoryDeliveryLogStore()
    public let devices = MemoryDeviceStore()
    public let apps = MemoryAppStore()

    public init() {}

    /// Applies `command` to the stores that keep what it changes (commands no store here keeps are left alone).
    public func apply(_ command: StorageCommand) {
        switch command.action {
        case .changeNotificationState(let change):
            notifications.apply(change)
        default:
            devices.apply(command.action)
            apps.apply(command.action)
        }
    }
}
