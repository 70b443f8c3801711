import Foundation
import JWTKit
import Logging
import NotifyModels

/// The signing keys of apps' identity providers: read through `IdentityDocumentFetching` (the JWKS at the provider's
/// `jwksUrl`, or at the `jwks_uri` of its issuer's discovery document), kept for `maximumAge`, and read again before
/// that when a token names a key (`kid`) the set does not hold, as after the provider rotated its keys.
///
/// Fetches are bounded so that tokens cannot make ingest hammer a provider: one fetch at a time per provider (callers
/// meanwhile wait for it), a refetch for an unknown key at most once per `refetchInterval` (a stream of tokens naming
/// made-up keys costs one fetch per interval), and after a failed fetch none for `refetchInterval`, while the keys
/// read before (if any) keep serving.
actor IdentityProviderKeys {
    /// A provider's keys as jwt-kit checks signatures with them, and the key ids among them.
    struct KeySet: Sendable {
        var keys: JWTKeyCollection
        var keyIds: Set<String>
    }

    /// No keys could be read from the provider, and none were read before.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
        /// When a fetch may be tried again.
        var retryAfterSeconds: Int
    }

    private struct Entry {
        var keySet: KeySet?
        var fetchedAt: ContinuousClock.Instant?
        var failedAt: ContinuousClock.Instant?
        var unknownKeyRefetchAt: ContinuousClock.Instant?
        var loading: Task<KeySet, any Error>?
    }

    private let fetcher: any IdentityDocumentFetching
    /// `host:port` addresses a provider's URLs may name over plain http (local tests).
    private let plainHTTPHosts: Set<String>
    private let maximumAge: Duration
    private let refetchInterval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let logger: Logger
    private var entries: [String: Entry] = [:]

    init(
        fetcher: some IdentityDocumentFetching, plainHTTPHosts: Set<String> = [], maximumAge: Duration = .seconds(3600),
        refetchInterval: Duration = .seconds(30), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, logger: Logger
    ) {
        self.fetcher = fetcher
        self.plainHTTPHosts = plainHTTPHosts
        self.maximumAge = maximumAge
        self.refetchInterval = refetchInterval
        self.now = now
        self.logger = logger
    }

    /// The provider's keys, read again first when they are older than `maximumAge`, or when they lack `keyId` and
    /// no refetch for an unknown key happened within `refetchInterval`. The set answered may still lack `keyId`.
    func keySet(of provider: IdentityProvider, holding keyId: String?) async throws(Unavailable) -> KeySet {
        let source = provider.jwksUrl.map { "\(provider.issuer) \($0)" } ?? provider.issuer
        let entry = entries[source] ?? Entry()
        let now = now()
        if let keySet = entry.keySet, let fetchedAt = entry.fetchedAt {
            let stale = now - fetchedAt >= maximumAge
            let unknown = keyId.map { !keySet.keyIds.contains($0) } ?? false
            guard stale || unknown else { return keySet }
            // A read under way is waited for; a new one is not made while the provider fails, nor twice within the
            // interval for unknown keys.
            if entry.loading == nil {
                if let failedAt = entry.failedAt, now - failedAt < refetchInterval { return keySet }
                if !stale {
                    if let refetchedAt = entry.unknownKeyRefetchAt, now - refetchedAt < refetchInterval { return keySet }
                    entries[source, default: Entry()].unknownKeyRefetchAt = now
                }
            }
            return (try? await load(source, provider)) ?? keySet
        }
        if entry.loading == nil, let failedAt = entry.failedAt, now - failedAt < refetchInterval {
            throw unavailable(provider, failedAt: failedAt, now: now)
        }
        do {
            return try await load(source, provider)
        } catch {
            throw unavailable(provider, failedAt: self.now(), now: self.now())
        }
    }

    /// Reads the provider's keys, or waits for the read already under way.
    private func load(_ source: String, _ provider: IdentityProvider) async throws -> KeySet {
        if let loading = entries[source]?.loading { return try await loading.value }
        let (fetcher, plainHTTPHosts) = (self.fetcher, self.plainHTTPHosts)
        let loading = Task { try await Self.fetchKeySet(of: provider, fetcher: fetcher, plainHTTPHosts: plainHTTPHosts) }
        entries[source, default: Entry()].loading = loading
        do {
            let keySet = try await loading.value
            entries[source, default: Entry()].keySet = keySet
            entries[source, default: Entry()].fetchedAt = now()
            entries[source, default: Entry()].failedAt = nil
            entries[source, default: Entry()].loading = nil
            return keySet
        } catch {
            entries[source, default: Entry()].failedAt = now()
            entries[source, default: Entry()].loading = nil
            logger.warning(
                "an identity provider's keys could not be read", metadata: ["issuer": "\(provider.issuer)", "error": "\(error)"])
            throw error
        }
    }

    private func unavailable(_ provider: IdentityProvider, failedAt: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Unavailable {
        let wait = max(refetchInterval - (now - failedAt), .seconds(1))
        return Unavailable(
            description: "the keys of the app's identity provider (\(provider.issuer)) cannot be read now",
            retryAfterSeconds: Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
    }

    /// What ingest reads of an OpenID Connect discovery document.
    private struct DiscoveryDocument: Decodable {
        var issuer: String
        var jwksURI: String

        private enum CodingKeys: String, CodingKey {
            case issuer
            case jwksURI = "jwks_uri"
        }
    }

    private struct KeySetDocument: Decodable {
        var keys: [JSONValue]
    }

    /// The provider's key set: its JWKS (found through the issuer's discovery document unless `jwksUrl` is given),
    /// keeping the keys that sign RS256 (RSA of 2048 bits or more) or ES256 (EC P-256) and have a `kid`.
    static func fetchKeySet(of provider: IdentityProvider, fetcher: any IdentityDocumentFetching, plainHTTPHosts: Set<String>) async throws -> KeySet {
        let location: String
        if let jwksUrl = provider.jwksUrl {
            location = jwksUrl
        } else {
            var issuer = provider.issuer
            while issuer.hasSuffix("/") { issuer.removeLast() }
            let discovery = try await read(DiscoveryDocument.self, "discovery document", at: issuer + "/.well-known/openid-configuration", fetcher: fetcher)
            guard discovery.issuer == provider.issuer else {
                throw IdentityDocumentFetchError(description: "the discovery document of \(provider.issuer) names the issuer \(discovery.issuer)")
            }
            guard IdentityProvider.isAcceptedURL(discovery.jwksURI, plainHTTPHosts: plainHTTPHosts) else {
                throw IdentityDocumentFetchError(description: "the discovery document of \(provider.issuer) names a jwks_uri that is not https")
            }
            location = discovery.jwksURI
        }
        let document = try await read(KeySetDocument.self, "JWKS", at: location, fetcher: fetcher)
        let keys = JWTKeyCollection()
        var keyIds = Set<String>()
        for case .object(let fields) in document.keys where isSigningKey(fields) {
            guard let jwk = try? JSONDecoder().decode(JWK.self, from: JSONEncoder().encode(fields)), let keyId = jwk.keyIdentifier?.string,
                  (try? await keys.add(jwk: jwk)) != nil
            else { continue }
            keyIds.insert(keyId)
        }
        guard !keyIds.isEmpty else {
            throw IdentityDocumentFetchError(description: "the key set at \(location) holds no RS256 or ES256 signing key with a kid")
        }
        return KeySet(keys: keys, keyIds: keyIds)
    }

    /// A public key for signatures of one of `IdentityProviderToken.algorithms`, with a key id.
    private static func isSigningKey(_ fields: [String: JSONValue]) -> Bool {
        func string(_ name: String) -> String? { if case .string(let value) = fields[name] { value } else { nil } }
        guard string("kid") != nil, fields["d"] == nil, string("use").map({ $0 == "sig" }) ?? true,
              string("alg").map(IdentityProviderToken.algorithms.contains) ?? true
        else { return false }
        switch string("kty") {
        case "RSA": return (string("n").flatMap(Base64URLCoding.decode)?.count ?? 0) >= 256
        case "EC": return string("crv") == "P-256"
        default: return false
        }
    }

    private static func read<Document: Decodable>(
        _ type: Document.Type, _ name: String, at location: String, fetcher: any IdentityDocumentFetching
    ) async throws -> Document {
        guard let url = URL(string: location) else { throw IdentityDocumentFetchError(description: "\(location) is not a URL") }
        let body = try await fetcher.fetch(url)
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw IdentityDocumentFetchError(description: "\(location) did not answer a \(name)")
        }
    }
}
