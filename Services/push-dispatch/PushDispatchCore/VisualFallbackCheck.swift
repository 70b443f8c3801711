import Foundation
import NotifyModels

/// Which visual fallbacks are no longer needed (`DeviceSyncCheck` asks the database; a test answers from memory).
protocol VisualFallbackCheck: Sendable {
    /// The push ids of `jobs` whose device has synced the job's change or whose subscription no longer exists.
    func unneeded(_ jobs: [PushJob]) async throws -> Set<UUID>
}

extension DeviceSyncCheck: VisualFallbackCheck {}
