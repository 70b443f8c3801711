import Foundation

/// An app registered for WNS: its OAuth client credentials.
struct WNSApp: Codable, Sendable {
    let clientId: String
    let clientSecret: String
}

/// A notification channel of one app instance on one device.
struct WNSChannel: Codable, Sendable {
    let channelId: String
    /// The app whose tokens may push to the channel; nil lets any registered app push.
    let clientId: String?
    /// Set when the channel expired: pushes are answered 410 Gone.
    var expired = false
}

/// WNS apps and channels, persisted as `wns-apps.json` and `wns-channels.json`.
final class WNSRegistry: Sendable {
    private let apps: PersistedTable<WNSApp>
    private let channels: PersistedTable<WNSChannel>

    init(directory: URL) throws {
        apps = try PersistedTable(file: directory.appending(path: "wns-apps.json"))
        channels = try PersistedTable(file: directory.appending(path: "wns-channels.json"))
    }

    func app(clientId: String) -> WNSApp? {
        apps[clientId]
    }

    func channel(id: String) -> WNSChannel? {
        channels[id]
    }

    /// Registers an app as Partner Center does: a package SID as client id, and a client secret.
    func createApp() throws -> WNSApp {
        let digits = (0..<7).map { _ in String(UInt32.random(in: .min ... .max)) }.joined(separator: "-")
        let app = WNSApp(clientId: "ms-app://s-1-15-2-" + digits, clientSecret: Base64URL.random(byteCount: 24))
        try apps.set(app, id: app.clientId)
        return app
    }

    /// Opens a channel as `CreatePushNotificationChannelForApplicationAsync` does on a device.
    func createChannel(clientId: String?) throws -> WNSChannel {
        let channel = WNSChannel(channelId: Base64URL.random(byteCount: 24), clientId: clientId)
        try channels.set(channel, id: channel.channelId)
        return channel
    }

    /// Marks a channel expired; false if there is none with that id.
    func expireChannel(id: String) throws -> Bool {
        guard var channel = channels[id] else { return false }
        channel.expired = true
        try channels.set(channel, id: id)
        return true
    }
}
