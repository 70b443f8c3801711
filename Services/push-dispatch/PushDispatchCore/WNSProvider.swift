import NotifyModels

/// WNS: the app's access token (a new one once when WNS refuses it); a change handled elsewhere also clears the
/// notification's toast; answers mapped to actions.
struct WNSProvider: SinglePushProvider {
    let client: WNSClient
    let credentials: any CredentialSource<WNSCredentials>

    var platform: Platform { .wns }

    func deliver(_ job: PushJob) async -> PushVerdict {
        if let refusal = client.http.refusal(ofPushEndpoint: job.deviceToken, at: .wns) { return refusal }
        switch await credentials.lookup(appId: job.appId, appPackage: job.appPackage, providerName: "WNS") {
        case .usable(let stored): return await send(job, credentials: stored, renewingRefusedToken: true)
        case .unusable(let verdict): return verdict
        }
    }

    /// Whether the change ends the notification's toast: a state change (read, dismissed, ... on another device),
    /// a deletion, an expiry or a broadcast's removal from the feed. Push jobs do not carry the new state, so every
    /// state change clears it.
    static func clearsToast(_ job: PushJob) -> Bool {
        !job.kind.isContentChange
    }

    private func send(_ job: PushJob, credentials: WNSCredentials, renewingRefusedToken: Bool) async -> PushVerdict {
        let accessToken: String
        switch await client.accessToken(for: credentials) {
        case .success(let token): accessToken = token
        case .failure(let failure): return failure.verdict
        }
        var answer = ProviderAnswer.accepted(status: 200)
        if Self.clearsToast(job) {
            answer = await client.clearToast(job, accessToken: accessToken)
        }
        if case .accepted = answer {
            answer = await client.notify(job, accessToken: accessToken)
        }
        if case .rejected(401, _, _) = answer, renewingRefusedToken {
            client.invalidate(accessToken, of: credentials)
            return await send(job, credentials: credentials, renewingRefusedToken: false)
        }
        return PushVerdict(WNSAnswerClassifier.classify(answer), answer)
    }
}
