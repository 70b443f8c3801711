import AsyncHTTPClient
import NotifyModels

/// Web Push: aes128gcm-encrypted payloads with VAPID authorization, push service answers mapped to actions.
struct WebPushProvider: SinglePushProvider {
    let client: WebPushClient
    let credentials: any CredentialSource<WebPushCredentials>

    var platform: Platform { .webpush }

    func deliver(_ job: PushJob) async -> PushVerdict {
        if let refusal = client.http.refusal(ofPushEndpoint: job.deviceToken, at: .webPush) { return refusal }
        switch await credentials.lookup(appId: job.appId, appPackage: job.appPackage, providerName: "Web Push") {
        case .usable(let stored):
            let request: HTTPClientRequest
            do {
                request = try await client.request(for: job, credentials: stored)
            } catch {
                return error.verdict
            }
            let answer = await client.send(request, of: job.appId)
            return PushVerdict(WebPushAnswerClassifier.classify(answer), answer)
        case .unusable(let verdict):
            return verdict
        }
    }
}
