// swift-tools-version:6.1
import PackageDescription

// The Swift client library apps integrate, on its own: Foundation only, so an iOS or macOS app that depends on it
// resolves nothing of the server (no Hummingbird, PostgresNIO or SwiftNIO). The service's own package depends on
// this one for the public API types (NotifyAPI), so there is one definition of each.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "NotifyClient",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "NotifyClient", targets: ["NotifyClient"]),
        .library(name: "NotifyAPI", targets: ["NotifyAPI"]),
    ],
    targets: [
        // The HTTP API's types: requests, answers, errors, the wire timestamps and ids (Foundation only).
        .target(name: "NotifyAPI", swiftSettings: swiftSettings),
        .target(name: "NotifyClient", dependencies: ["NotifyAPI"], swiftSettings: swiftSettings),
        .testTarget(name: "NotifyClientUnitTests", dependencies: ["NotifyClient", "NotifyAPI"], swiftSettings: swiftSettings),
    ]
)
