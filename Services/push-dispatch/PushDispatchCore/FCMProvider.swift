import Foundation
import NotifyModels

/// FCM HTTP v1: the service account's access token (a new one once when FCM refuses it), answers mapped to actions.
struct FCMProvider: SinglePushProvider {
    let client: FCMClient
    let credentials: any CredentialSource<FCMCredentials>

    var platform: Platform { .fcm }

    func deliver(_ job: PushJob) async -> PushVerdict {
        switch await credentials.lookup(appId: job.appId, appPackage: job.appPackage, providerName: "FCM") {
        case .usable(let stored):
            let body: Data
            do {
                body = try FCMClient.body(job)
            } catch {
                return error.verdict
            }
            return await send(body, of: job.appId, credentials: stored, renewingRefusedToken: true)
        case .unusable(let verdict): return verdict
        }
    }

    private func send(_ body: Data, of appId: String, credentials: FCMCredentials, renewingRefusedToken: Bool) async -> PushVerdict {
        let accessToken: String
        switch await client.accessToken(for: credentials.serviceAccount) {
        case .success(let token): accessToken = token
        case .failure(let failure): return failure.verdict
        }
        let answer = await client.send(body, of: appId, accessToken: accessToken, credentials: credentials)
        if case .rejected(401, _, _) = answer, renewingRefusedToken {
            client.invalidate(accessToken, of: credentials.serviceAccount)
            return await send(body, of: appId, credentials: credentials, renewingRefusedToken: false)
        }
        return PushVerdict(FCMAnswerClassifier.classify(answer), answer)
    }
}
