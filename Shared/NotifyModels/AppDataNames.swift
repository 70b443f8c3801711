/// The names app data (`push.data`) cannot take on a provider. The app's keys go where each provider keeps an app's own:
/// beside `aps` at an APNs payload's top level, in FCM's `data` map, and under `data` in the JSON of a Web Push message
/// or a WNS raw notification (a namespace of the app's alone, where every name is free). Refused are each provider's own
/// names, and on APNs and FCM the few keys notify writes beside the app's there (its marker, which the client library
/// recognises a push by, and the keys apps already read: `rawContent`, `imageUrl`, `badge`).
public enum AppDataNames {
    /// APNs' own key of a payload's top level.
    static let apns: Set<String> = ["aps"]
    /// What notify writes beside the app's keys at an APNs payload's top level (the VoIP payload's alert text too).
    static let notifyOnAPNs: Set<String> = ["notify", "rawContent", "imageUrl"]
    static let notifyOnVoIP: Set<String> = ["notify", "rawContent", "alert"]
    /// FCM's reserved `data` keys: these words, and any starting with `google` or `gcm` (FCM HTTP v1, `Message.data`).
    static let fcm: Set<String> = ["from", "notification", "message_type"]
    static let fcmPrefixes = ["google", "gcm"]
    /// What notify writes beside the app's keys in FCM's `data`.
    static let notifyOnFCM: Set<String> = ["notifyId", "notifySeq", "notifyKind", "notifyUrl", "badge", "rawContent"]

    /// Why `key` cannot be an app data key of a notification pushed to `platforms` (nil: every provider but
    /// `apns-voip`, which is pushed only when named), naming the provider; nil when every one takes it.
    public static func refusal(of key: String, on platforms: [Platform]?) -> String? {
        let targets = platforms ?? [.apns, .fcm, .wns, .webpush]
        for platform in targets {
            if let reason = refusal(of: key, on: platform) {
                return reason + "; rename the key, or leave \(platform.rawValue) out of targetPolicy.platformTypes"
            }
        }
        return nil
    }

    private static func refusal(of key: String, on platform: Platform) -> String? {
        switch platform {
        case .apns, .apnsVoip:
            if apns.contains(key) { return "APNs keeps \(key) for its own keys (the app's data goes beside it)" }
            let notifyKeys = platform == .apns ? notifyOnAPNs : notifyOnVoIP
            if notifyKeys.contains(key) {
                return "on \(platform.rawValue) the app's data goes beside notify's own \(notifyKeys.sorted().joined(separator: ", ")) (\(key) is one)"
            }
        case .fcm:
            if fcm.contains(key) || fcmPrefixes.contains(where: key.hasPrefix) {
                return "FCM reserves \(key) in data (from, notification, message_type and keys starting with google or gcm)"
            }
            if notifyOnFCM.contains(key) {
                return "in FCM's data the app's keys go beside notify's own \(notifyOnFCM.sorted().joined(separator: ", ")) (\(key) is one)"
            }
        case .wns, .webpush, .polling:
            break
        }
        return nil
    }
}
