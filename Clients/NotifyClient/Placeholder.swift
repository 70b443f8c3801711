/// Placeholder until the client library lands.
enum NotifyClientPlaceholder {}
