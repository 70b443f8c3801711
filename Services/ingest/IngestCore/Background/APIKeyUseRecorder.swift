import Foundation
import Logging
import NotifyRuntime
import NotifyModels
import ServiceLifecycle
import Synchronization

/// When each scoped API key was last used, gathered in memory and sent to storage at most once every `interval` (10 s) per key
/// (one message for all), so a key's `lastUsedAt` costs no write per request. Uses noted since the last send go with
/// the next one, and at shutdown.
final class APIKeyUseRecorder: Sendable {
    private struct KeyOfApp: Hashable {
        var appId: String
        var keyId: String
    }

    private let uses = Mutex<[KeyOfApp: Date]>([:])

    init() {}

    func record(appId: String, keyId: String, at time: Date = Date()) {
        uses.withLock { $0[KeyOfApp(appId: appId, keyId: keyId)] = time }
    }

    /// The uses noted since the last call, as storage commands.
    func takeCommands() -> [StorageCommand] {
        uses.withLock { uses in
            defer { uses = [:] }
            return uses.map { StorageCommand(action: .recordAPIKeyUse(appId: $0.key.appId, keyId: $0.key.keyId, at: $0.value)) }
        }
    }
}

/// Sends the noted uses of scoped API keys to storage every `interval`, and once more at shutdown.
struct APIKeyUseReporter: Service {
    let recorder: APIKeyUseRecorder
    let sender: CommandSender
    var interval: Duration = .seconds(10)
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await pauseUnlessShuttingDown(for: interval)
            await send()
        }
    }

    private func send() async {
        let commands = recorder.takeCommands()
        guard !commands.isEmpty else { return }
        do {
            for start in stride(from: 0, to: commands.count, by: StorageCommandBatch.maximumCommands) {
                try await sender.send(Array(commands[start..<min(start + StorageCommandBatch.maximumCommands, commands.count)]))
            }
        } catch {
            // Only a key's last use is lost (the next use records it again).
            logger.warning("could not record the use of scoped API keys", metadata: ["error": "\(error)"])
        }
    }
}
