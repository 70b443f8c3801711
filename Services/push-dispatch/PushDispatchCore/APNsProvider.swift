import Foundation
import NotifyAPNs
import NotifyAPNsCore
import NotifyModels

/// APNs: token auth, one provider-token refresh on a refused token, Apple's answers mapped to actions. A batch is
/// sent per app identity (app and the devices' app package), all of its pushes at once as streams of that app's connections, without a task per push.
struct APNsProvider: PushProvider {
    let client: APNsClient
    let credentials: any CredentialSource<APNsCredentials>

    var platform: Platform { .apns }

    func deliver(_ jobs: [PushJob], concurrency _: Int) async -> [PushAttempt] {
        var indicesByApp: [AppIdentity: [Int]] = [:]
        for (index, job) in jobs.enumerated() {
            indicesByApp[AppIdentity(appId: job.appId, appPackage: job.appPackage), default: []].append(index)
        }
        return await withTaskGroup(of: (indices: [Int], attempts: [PushAttempt]).self, returning: [PushAttempt].self) { group in
            for (identity, indices) in indicesByApp {
                group.addTask { (indices, await deliver(indices.map { jobs[$0] }, identity: identity)) }
            }
            // Every index belongs to exactly one app, so every place is filled.
            var attempts = [PushAttempt?](repeating: nil, count: jobs.count)
            for await app in group {
                for (index, attempt) in zip(app.indices, app.attempts) {
                    attempts[index] = attempt
                }
            }
            return attempts.map { $0! }
        }
    }

    /// Sends the pushes of one app; those refused for the provider token are sent once more with a new token
    /// (on new connections, so no connection sees the token change) if the old one was old enough to replace.
    private func deliver(_ jobs: [PushJob], identity: AppIdentity) async -> [PushAttempt] {
        let started = ContinuousClock.now
        let key: APNsCredentials
        switch await credentials.lookup(appId: identity.appId, appPackage: identity.appPackage, providerName: "APNs") {
        case .unusable(let verdict):
            return Array(repeating: PushAttempt(verdict: verdict, answerTime: ContinuousClock.now - started), count: jobs.count)
        case .usable(let credentials):
            key = credentials
        }
        var answers = await client.send(jobs, credentials: key)
        let refused = answers.indices.filter { APNsAnswerClassifier.classify(answers[$0].answer) == .credentials }
        if !refused.isEmpty, client.signer.invalidate(teamId: key.teamId, keyId: key.keyId) {
            client.connections.reset(teamId: key.teamId, keyId: key.keyId, baseURL: key.baseURL)
            let again = await client.send(refused.map { jobs[$0] }, credentials: key)
            for (index, answer) in zip(refused, again) {
                answers[index] = APNsClient.TimedAnswer(answer: answer.answer, answerTime: answers[index].answerTime + answer.answerTime)
            }
        }
        return answers.map { PushAttempt(verdict: Self.verdict(of: $0.answer), answerTime: $0.answerTime) }
    }

    /// Pushes sent with the same credentials: an app, and the app package its devices registered with.
    private struct AppIdentity: Hashable {
        var appId: String
        var appPackage: String?
    }

    private static func verdict(of answer: APNsClient.Answer) -> PushVerdict {
        let action = APNsAnswerClassifier.classify(answer)
        switch answer {
        case .accepted: return PushVerdict(action: action, status: 200, reason: nil)
        case .rejected(let status, let reason, _, _): return PushVerdict(action: action, status: status, reason: reason)
        case .unreachable(let reason): return PushVerdict(action: action, status: nil, reason: reason)
        }
    }
}
