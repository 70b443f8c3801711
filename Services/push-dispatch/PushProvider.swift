import Foundation
import NotifyModels

/// What a provider's answer means for one push.
enum PushAction: Equatable, Sendable {
    case accepted
    /// Try again later (through a delay queue), no sooner than `after` seconds if given.
    case retry(after: Int?)
    /// The device token is gone: remove the subscription unless it was registered again after `since`.
    case tokenInvalid(since: Date?)
    /// The provider refused the app's credentials (after one refresh): flag them, delete nothing.
    case credentials
    /// A bug in the payload or request, or no credentials: retrying cannot help.
    case fail
}

/// One attempt's action with the provider's status and reason, for the log and the delivery log.
struct PushVerdict: Sendable {
    var action: PushAction
    var status: Int?
    var reason: String?
}

/// A push provider (APNs, FCM, WNS, Web Push): sends one job and says what its answer means.
protocol PushProvider: Sendable {
    var platform: Platform { get }
    func deliver(_ job: PushJob) async -> PushVerdict
}
