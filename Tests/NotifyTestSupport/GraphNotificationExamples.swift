import Foundation

/// The bodies Microsoft Graph's documentation gives for its create notification (`POST /me/notifications`), as an app
/// server moving from Graph notifications sends them.
public enum GraphNotificationExamples {
    /// The create's visual example (a toast on Windows, iOS and Android), with the expiration given: the documented one
    /// (2019-10-30T23:59:00.000Z) is past, and Graph too refuses a notification that has expired.
    public static func visual(expiring expiration: Date) -> String {
        """
        {
            "targetHostName": "graphnotifications.sample.windows.com",
            "appNotificationId": "testDirectToastNotification",
            "expirationDateTime": "\(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(expiration))",
            "payload": {
                "visualContent": {
                    "title": "Hello World!",
                    "body": "Notifications are Great!"
                }
            },
            "targetPolicy": {
                "platformTypes": [
                    "windows",
                    "ios",
                    "android"
                ]
            },
            "priority": "High",
            "groupName": "TestGroup",
            "displayTimeToLive": "60"
        }
        """
    }

    /// The raw example of Graph notifications' sample app service (data for the app on Windows).
    public static let raw = """
        {
            "targetHostName": "graphnotifications.sample.windows.com",
            "appNotificationId": "sampleRawNotification",
            "payload": {
                "rawContent": "Aren't Notifications the best??!!"
            },
            "targetPolicy": {
                "platformTypes": [
                    "windows"
                ]
            },
            "priority": "High",
            "displayTimeToLive": "60"
        }
        """

    /// A time `seconds` ahead, in whole seconds (as the visual example's expiration reads back).
    public static func expiration(in seconds: TimeInterval = 86_400) -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + seconds).rounded(.down))
    }
}
