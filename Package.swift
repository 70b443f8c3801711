// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "notify",
    // The services build on Linux (the AMQP layer's C shim uses Linux calls); macOS is named for the shared modules.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ingest", targets: ["Ingest"]),
        .executable(name: "storage", targets: ["Storage"]),
        .executable(name: "fanout", targets: ["Fanout"]),
        .executable(name: "push-dispatch", targets: ["PushDispatch"]),
        .executable(name: "provider-sandbox", targets: ["ProviderSandbox"]),
        .executable(name: "loadgen", targets: ["LoadGenerator"]),
        .executable(name: "notifyctl", targets: ["NotifyCtl"]),
        .library(name: "NotifyModels", targets: ["NotifyModels"]),
        .executable(name: "device-sim", targets: ["DeviceSimulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(path: "Clients/NotifyClient"),
    ],
    targets: [
        // MARK: Shared
        .systemLibrary(
            name: "CRabbitMQ",
            path: "Shared/CRabbitMQ",
            pkgConfig: "librabbitmq",
            providers: [.apt(["librabbitmq-dev"])]
        ),
        .target(
            name: "CAMQPShim",
            dependencies: ["CRabbitMQ"],
            path: "Shared/CAMQPShim"
        ),
        .target(
            name: "NotifyAMQP",
            dependencies: [
                "CAMQPShim", "CRabbitMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/NotifyAMQP",
            swiftSettings: swiftSettings
        ),
        // JSON read and written by hand for the public formats: the publish body's reader (JSONDecoder cost ingest about
        // 45 % of its sustained accepted/s, docs/benchmarks-history.md, "2026-11-23, 23b2129"), the answers' and provider payloads' writer.
        .target(
            name: "NotifyJSON",
            dependencies: [.product(name: "NotifyAPI", package: "NotifyClient")],
            path: "Shared/NotifyJSON",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyModels",
            dependencies: [
                "NotifyJSON", .product(name: "NotifyAPI", package: "NotifyClient"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Shared/NotifyModels",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyAPNsCore",
            dependencies: [
                "NotifyModels", "NotifyJSON",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Shared/NotifyAPNs/Core",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyAPNs",
            dependencies: [
                "NotifyAPNsCore", "NotifyModels", "NotifyOutbound",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Shared/NotifyAPNs/Transport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyWire",
            dependencies: ["NotifyModels", "NotifyAMQP", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Shared/NotifyWire",
            exclude: ["Protos", "regenerate.sh", "README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyRuntime",
            dependencies: [
                "NotifyAMQP", "NotifyDatabase", "NotifyModels", "NotifyJSON", "NotifyOutbound",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Shared/NotifyRuntime",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyDatabase",
            dependencies: [
                "NotifyModels",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Shared/NotifyDatabase",
            swiftSettings: swiftSettings
        ),
        // The schema and every query of the shared tables; callers depend on its small protocols (NotifyStoreTesting holds
        // in-memory implementations for in-process tests).
        .target(
            name: "NotifyStore",
            dependencies: [
                "NotifyModels", "NotifyDatabase", "NotifyWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Shared/NotifyStore",
            swiftSettings: swiftSettings
        ),

        // The outbound address policy: what the service may call on a tenant's behalf, and the HTTP client that keeps to it.
        .target(
            name: "NotifyOutbound",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Shared/NotifyOutbound",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotifyBrokerAdmin",
            dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")],
            path: "Shared/NotifyBrokerAdmin",
            swiftSettings: swiftSettings
        ),

        // MARK: Services
        // openapi.yaml embedded in IngestCore at build time (OpenAPIDocument.swift is generated, not kept in git).
        .executableTarget(
            name: "embed-openapi",
            path: "Tools/embed-openapi",
            swiftSettings: swiftSettings
        ),
        .plugin(
            name: "EmbedOpenAPI",
            capability: .buildTool(),
            dependencies: ["embed-openapi"],
            path: "Tools/embed-openapi-plugin"
        ),
        .target(
            name: "IngestCore",
            dependencies: [
                "NotifyJSON", "NotifyModels", "NotifyAPNsCore", "NotifyAMQP", "NotifyWire", "NotifyRuntime", "NotifyDatabase", "NotifyStore", "NotifyOutbound",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/ingest/IngestCore",
            swiftSettings: swiftSettings,
            plugins: ["EmbedOpenAPI"]
        ),
        .executableTarget(
            name: "Ingest",
            dependencies: [
                "IngestCore", "NotifyRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/ingest/App",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StorageCore",
            dependencies: [
                "NotifyModels", "NotifyAMQP", "NotifyWire", "NotifyRuntime", "NotifyDatabase", "NotifyStore", "NotifyBrokerAdmin",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/storage/StorageCore",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "Storage",
            dependencies: [
                "StorageCore", "NotifyRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/storage/App",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FanoutCore",
            dependencies: [
                "NotifyAPNsCore", "NotifyModels", "NotifyAMQP", "NotifyWire", "NotifyRuntime", "NotifyDatabase", "NotifyStore",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/fanout/FanoutCore",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "Fanout",
            dependencies: [
                "FanoutCore", "NotifyRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/fanout/App",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PushDispatchCore",
            dependencies: [
                "NotifyAPNs", "NotifyAPNsCore", "NotifyModels", "NotifyJSON", "NotifyAMQP", "NotifyWire", "NotifyRuntime", "NotifyDatabase", "NotifyStore", "NotifyOutbound",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/push-dispatch/PushDispatchCore",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PushDispatch",
            dependencies: [
                "PushDispatchCore", "NotifyRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/push-dispatch/App",
            swiftSettings: swiftSettings
        ),

        // MARK: Tools
        .executableTarget(
            name: "ProviderSandbox",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/provider-sandbox",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "LoadGenerator",
            dependencies: [
                "NotifyModels", "NotifyJSON", "NotifyAMQP", "NotifyWire", "NotifyDatabase", "NotifyStore", "NotifyAPNsCore", "NotifyRuntime",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/loadgen",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "NotifyCtl",
            dependencies: [
                "NotifyModels", "NotifyWire", "NotifyBrokerAdmin",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/notifyctl",
            swiftSettings: swiftSettings
        ),

        // MARK: Clients (the client library is a package of its own: Clients/NotifyClient)
        .executableTarget(
            name: "DeviceSimulator",
            dependencies: [
                .product(name: "NotifyClient", package: "NotifyClient"), "NotifyModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/device-sim",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        // What several test targets use: running a publisher, services or a database client around a test, a publisher
        // that records, an HTTP server on the loopback. Only test targets depend on it.
        .target(
            name: "NotifyTestSupport",
            dependencies: [
                "NotifyAMQP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/NotifyTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyModelsTests",
            dependencies: ["NotifyModels", "NotifyJSON", "NotifyAPNsCore", .product(name: "JWTKit", package: "jwt-kit")],
            path: "Tests/NotifyModelsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyWireTests",
            dependencies: ["NotifyWire", "NotifyModels", "NotifyAMQP", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/NotifyWireTests",
            swiftSettings: swiftSettings
        ),
        // In-memory stores for in-process tests of what reads or writes the database, and what only tests read or write
        // of the real one (inspections, fixtures, a scratch database).
        .target(
            name: "NotifyStoreTesting",
            dependencies: [
                "NotifyStore", "NotifyModels", "NotifyDatabase", "NotifyTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/NotifyStoreTesting",
            swiftSettings: swiftSettings
        ),
        // Each store function against the test stack's PostgreSQL.
        .testTarget(
            name: "NotifyStoreTests",
            dependencies: [
                "NotifyStore", "NotifyStoreTesting", "NotifyModels", "NotifyDatabase", "NotifyWire",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/NotifyStoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IngestCoreTests",
            dependencies: [
                "IngestCore", "NotifyModels", "NotifyTestSupport", "NotifyWire", "NotifyAMQP", "NotifyDatabase", "NotifyRuntime", "NotifyStore",
                "NotifyStoreTesting",
                .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/IngestCoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FanoutCoreTests",
            dependencies: [
                "FanoutCore", "NotifyModels", "NotifyWire", "NotifyAMQP", "NotifyRuntime", "NotifyStore", "NotifyStoreTesting", "NotifyTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/FanoutCoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StorageCoreTests",
            dependencies: [
                "StorageCore", "NotifyModels", "NotifyWire", "NotifyDatabase", "NotifyStore", "NotifyStoreTesting", "NotifyAMQP", "NotifyRuntime",
                "NotifyBrokerAdmin", "NotifyTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/StorageCoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyOutboundTests",
            dependencies: [
                "NotifyOutbound", "NotifyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/NotifyOutboundTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyRuntimeTests",
            dependencies: ["NotifyRuntime", "NotifyModels", .product(name: "Logging", package: "swift-log")],
            path: "Tests/NotifyRuntimeTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyDatabaseTests",
            dependencies: ["NotifyDatabase", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/NotifyDatabaseTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyAPNsTests",
            dependencies: [
                "NotifyAPNs", "NotifyAPNsCore", "NotifyModels", "NotifyOutbound",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/NotifyAPNsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PushDispatchTests",
            dependencies: [
                "PushDispatchCore", "NotifyAPNs", "NotifyAMQP", "NotifyModels", "NotifyOutbound", "NotifyTestSupport", "NotifyWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/PushDispatchTests",
            swiftSettings: swiftSettings
        ),
        // The AMQP layer's logic without a broker: URLs, the publisher's states, confirms matched to publishes.
        .testTarget(
            name: "NotifyAMQPTests",
            dependencies: ["NotifyAMQP"],
            path: "Tests/NotifyAMQPTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AMQPIntegrationTests",
            dependencies: ["NotifyAMQP", "NotifyTestSupport", .product(name: "MetricsTestKit", package: "swift-metrics")],
            path: "Tests/AMQPIntegrationTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotifyClientTests",
            dependencies: [
                .product(name: "NotifyClient", package: "NotifyClient"),
                "NotifyModels",
                "NotifyAPNsCore",
            ],
            path: "Tests/NotifyClientTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "NotifyModels",
                "NotifyTestSupport",
                .product(name: "NotifyClient", package: "NotifyClient"),
                "NotifyAMQP",
                "NotifyWire",
                "NotifyDatabase",
                "NotifyStore",
                "NotifyStoreTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/EndToEndTests",
            // Scripts a test runs with another language's AMQP client.
            exclude: ["Python"],
            swiftSettings: swiftSettings
        ),
    ]
)
