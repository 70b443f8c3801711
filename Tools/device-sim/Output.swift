import Foundation
import NotifyModels

/// What device-sim prints: one line per change or notification, written at once (no buffering).
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// `seq kind id readState userActionState title`
    static func change(_ change: NotificationChange) {
        let view = change.notification
        line("\(change.sequence) \(change.kind.rawValue) \(view.id.uuidString.lowercased()) \(view.readState.rawValue) \(view.userActionState.rawValue) \(title(view))")
    }

    /// `id readState userActionState title`
    static func notification(_ view: NotificationView) {
        line("\(view.id.uuidString.lowercased()) \(view.readState.rawValue) \(view.userActionState.rawValue) \(title(view))")
    }

    private static func title(_ view: NotificationView) -> String {
        view.payload?.visualContent?.title ?? view.payload?.rawContent ?? "-"
    }
}
