// The provider sandbox stands in for APNs, FCM, Web Push and WNS, and checks what the services send them. It keeps
// its own byte and JSON utilities on purpose (Base64URL.swift, ASCIIHexDigit.swift, UUIDText.swift, JSONDocument.swift
// and JSONText.swift, beside the shared ones in Shared/NotifyJSON and elsewhere) and depends on no Notify module: it is
// an independent oracle, so it must not share the services' code, since a bug in a shared utility would then pass on
// both sides. Keep them separate rather than deduplicating them.

import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

extension SandboxCommand {
    /// Wires the sandbox: state directory, certificates, credentials, recorder, the APNs listener,
    /// the listener of the other providers (FCM, Web Push, WNS) and the control API, run as one
    /// service group that shuts down gracefully on SIGTERM or SIGINT.
    func run() async throws {
        var logger = Logger(label: "provider-sandbox")
        logger.logLevel = logLevel

        let stateDirectory = URL(fileURLWithPath: stateDir, isDirectory: true)
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let certificateAuthority = try TestCertificateAuthority(
            directory: stateDirectory,
            extraNames: tlsNames,
            logger: logger
        )
        logger.info(
            "Clients must trust this CA certificate",
            metadata: ["ca": "\(certificateAuthority.caCertificatePath)"]
        )

        let keys = try KeyRegistry(file: stateDirectory.appending(path: "keys.json"))
        let recordFile = recordFile.map { URL(fileURLWithPath: $0) } ?? stateDirectory.appending(path: "deliveries.jsonl")
        let recorder = try DeliveryRecorder(recordFile: recordFile, capacity: maxRecords)
        logger.info("Recording accepted pushes", metadata: ["file": "\(recordFile.path)"])
        let faults = FaultInjector()
        let fcmAccounts = try FCMServiceAccounts(file: stateDirectory.appending(path: "fcm-service-accounts.json"))
        let wns = try WNSRegistry(directory: stateDirectory)
        let webPushSubscriptions = try WebPushSubscriptions(file: stateDirectory.appending(path: "webpush-subscriptions.json"))

        let idleTimeout = TimeAmount.seconds(Int64(idleTimeoutSeconds))
        let apnsConnections = APNsConnectionRegistry(idleTimeout: idleTimeout)
        let apns = Server(
            childChannelSetup: try APNsServerChannel(
                tlsConfiguration: certificateAuthority.tlsConfiguration(),
                endpoint: APNsEndpoint(
                    verifier: ProviderTokenVerifier(keys: keys),
                    tokenTracker: ConnectionTokenTracker(),
                    faults: faults,
                    recorder: recorder
                ),
                registry: apnsConnections
            ),
            configuration: ServerConfiguration(address: .hostname(host, port: apnsPort)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        )
        let captures = RequestCaptures()
        let providersRouter = Router(context: ConnectionRequestContext.self)
        providersRouter.add(middleware: RequestCaptureMiddleware(captures: captures))
        FCMEndpoint(
            accounts: fcmAccounts,
            tokens: AccessTokenIssuer(prefix: "ya29.", lifetime: 3600),
            tokenURI: providersOrigin + "/fcm/token",
            faults: faults,
            recorder: recorder
        ).register(on: providersRouter)
        WebPushEndpoint(
            subscriptions: webPushSubscriptions,
            verifier: VAPIDVerifier(audience: providersOrigin),
            faults: faults,
            recorder: recorder
        ).register(on: providersRouter)
        WNSEndpoint(
            registry: wns,
            tokens: AccessTokenIssuer(prefix: "", lifetime: 86_400),
            faults: faults,
            recorder: recorder
        ).register(on: providersRouter)
        let providers = Application(
            router: providersRouter,
            // Hummingbird closes an HTTP/2 connection idle this long with GOAWAY, and an HTTP/1.1 one; it closes its
            // side when the client half-closes.
            server: try .http2Upgrade(
                tlsConfiguration: certificateAuthority.tlsConfiguration(),
                configuration: HTTP2UpgradeChannel.Configuration(
                    idleTimeout: .seconds(idleTimeoutSeconds),
                    streamConfiguration: HTTP1Channel.Configuration(idleTimeout: idleTimeout)
                )
            ),
            configuration: ApplicationConfiguration(address: .hostname(host, port: providersPort)),
            logger: logger
        )
        let control = Application(
            router: ControlAPI(
                keys: keys,
                fcmAccounts: fcmAccounts,
                webPushSubscriptions: webPushSubscriptions,
                wns: wns,
                recorder: recorder,
                faults: faults,
                apnsConnections: apnsConnections,
                feeds: FeedServer(),
                receivers: WebhookReceiver(),
                identityProviders: IdentityProviderServer(),
                captures: captures,
                providersOrigin: providersOrigin
            ).router(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: controlPort)),
            logger: logger
        )

        // Services stop in reverse order: the listeners first, then the recorder writes what is left.
        // Connections that ignore the shutdown (no answer to GOAWAY) are cut after 10 seconds.
        var configuration = ServiceGroupConfiguration(
            services: [recorder, apns, providers, control],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = .seconds(10)
        try await ServiceGroup(configuration: configuration).run()
    }
}

do {
    let command = try SandboxCommand.parse()
    try await command.run()
} catch {
    SandboxCommand.exit(withError: error)
}
