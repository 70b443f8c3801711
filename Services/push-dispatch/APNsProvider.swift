import Foundation
import NotifyModels

/// APNs: token auth, one provider-token refresh on a refused token, Apple's answers mapped to actions.
struct APNsProvider: PushProvider {
    let client: APNsClient
    let credentials: CredentialStore<APNsCredentials>

    var platform: Platform { .apns }

    func deliver(_ job: PushJob) async -> PushVerdict {
        let stored: CredentialStore<APNsCredentials>.Entry?
        do {
            stored = try await credentials.credentials(appId: job.appId)
        } catch {
            return PushVerdict(action: .retry(after: nil), status: nil, reason: "credentials lookup failed")
        }
        guard let stored else { return PushVerdict(action: .fail, status: nil, reason: "the app has no APNs credentials") }
        if let refusal = stored.rejectedReason {
            return PushVerdict(action: .fail, status: 403, reason: "the app's APNs credentials were refused (\(refusal)); store new ones")
        }
        let key = stored.credentials
        var answer = await client.send(job, credentials: key)
        var action = APNsAnswerClassifier.classify(answer)
        if action == .credentials, client.signer.invalidate(teamId: key.teamId, keyId: key.keyId) {
            // Refresh the provider token once, on a new connection, so no connection sees the token change.
            client.connections.reset(teamId: key.teamId, keyId: key.keyId, baseURL: key.baseURL)
            answer = await client.send(job, credentials: key)
            action = APNsAnswerClassifier.classify(answer)
        }
        switch answer {
        case .accepted: return PushVerdict(action: action, status: 200, reason: nil)
        case .rejected(let status, let reason, _, _): return PushVerdict(action: action, status: status, reason: reason)
        case .unreachable(let reason): return PushVerdict(action: action, status: nil, reason: reason)
        }
    }
}
