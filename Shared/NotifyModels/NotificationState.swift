/// Whether the user has read a notification.
public enum ReadState: String, Codable, Sendable, CaseIterable {
    case unread, read
}

/// What the user did with a notification, as in the Rome SDK's `UserActionState`.
public enum UserActionState: String, Codable, Sendable, CaseIterable {
    case noInteraction, activated, dismissed, snoozed
}

/// Lifecycle of a stored notification.
public enum NotificationStatus: String, Codable, Sendable, CaseIterable {
    case active, expired, deleted
}

/// Delivery priority as the app server asks for it.
public enum NotificationPriority: String, Codable, Sendable, CaseIterable {
    case high, low, none
}

/// A device's push platform (or the live stream).
public enum Platform: String, Codable, Sendable, CaseIterable {
    case apns, fcm, wns, webpush
}
