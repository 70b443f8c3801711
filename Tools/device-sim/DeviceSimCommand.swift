import ArgumentParser
import Foundation
import NotifyClient

/// Acts as one device of a user through the NotifyClient library.
@main
struct DeviceSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-sim",
        abstract: "Acts as one device through the NotifyClient library: registers, prints what arrives, changes state.",
        discussion: """
            Change lines read: seq kind id readState userActionState title.
            Two devices of one user (different --name) show a dismiss on one reaching the other:
              device-sim run --app-id APP --signing-key KEY --user-id alice --name phone
              device-sim dismiss ID --app-id APP --signing-key KEY --user-id alice --name tablet
            """,
        subcommands: [RunCommand.self, ListCommand.self, DismissCommand.self, ReadCommand.self, DeleteCommand.self])
}

/// Registers, syncs, then keeps the live stream open and prints every change until the duration ends.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Register, then print every change as it arrives.")

    @OptionGroup var device: DeviceOptions

    @Option(help: "The APNs device token to register (64 hex; default: the stored one, else a random one).")
    var pushToken: String?

    @Option(help: "Seconds to run before exiting.")
    var duration = 60

    func run() async throws {
        let client = try device.makeClient()
        let stored = await client.subscription?.pushToken
        let token = pushToken ?? stored ?? randomPushToken()
        let subscription = try await client.subscribe(pushToken: token, platform: .apns, displayName: device.name)
        Output.line("subscribed \(subscription.id.uuidString.lowercased()) token \(token) expires \(subscription.expirationDateTime)")
        let changes = client.changes
        let printer = Task {
            for await change in changes { Output.change(change) }
        }
        await client.startLiveUpdates()
        try? await Task.sleep(for: .seconds(duration))
        await client.stopLiveUpdates()
        printer.cancel()
    }

    private func randomPushToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

/// Syncs and lists the cached notifications, newest first.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Sync, then list the active notifications (id readState userActionState title).")

    @OptionGroup var device: DeviceOptions

    func run() async throws {
        let client = try device.makeClient()
        try await client.sync()
        for view in await client.readBatch(maxSize: .max) { Output.notification(view) }
    }
}

/// Marks a notification dismissed on every device.
struct DismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dismiss", abstract: "Set a notification's userActionState to dismissed.")

    @OptionGroup var device: DeviceOptions
    @Argument(help: "The notification id.", transform: StateCommand.notificationId) var id: UUID

    func run() async throws {
        try await StateCommand.perform(device) { try await $0.setState(of: id, userActionState: .dismissed) }
    }
}

/// Marks a notification read on every device.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Set a notification's readState to read.")

    @OptionGroup var device: DeviceOptions
    @Argument(help: "The notification id.", transform: StateCommand.notificationId) var id: UUID

    func run() async throws {
        try await StateCommand.perform(device) { try await $0.setState(of: id, readState: .read) }
    }
}

/// Deletes a notification for the user.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a notification for the user on every device.")

    @OptionGroup var device: DeviceOptions
    @Argument(help: "The notification id.", transform: StateCommand.notificationId) var id: UUID

    func run() async throws {
        try await StateCommand.perform(device) { try await $0.delete(id) }
    }
}

/// Runs one state change and says whether it reached the service or is queued.
enum StateCommand {
    static func notificationId(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw ValidationError("\(text) is not a notification id (a UUID)") }
        return id
    }

    static func perform(_ device: DeviceOptions, _ change: (NotifyClient) async throws -> Void) async throws {
        let client = try device.makeClient()
        try await change(client)
        let pending = await client.pendingChangeCount
        Output.line(pending == 0 ? "sent" : "queued (\(pending) pending; sent by the next command that reaches the service)")
    }
}
