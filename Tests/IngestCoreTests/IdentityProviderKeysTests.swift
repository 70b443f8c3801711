import Foundation
import JWTKit
import Logging
import NotifyModels
import Synchronization
import Testing

@testable import IngestCore

/// How ingest finds and keeps an identity provider's keys, against documents served from memory and a clock the test
/// moves.
@Suite struct IdentityProviderKeysTests {
    static let issuer = "https://idp.notify.test/tenant"
    static let discovery = "\(issuer)/.well-known/openid-configuration"
    static let keySetURL = "\(issuer)/keys"
    let provider = IdentityProvider(issuer: issuer, audience: "ios-client")

    /// A clock that moves only when told.
    final class TestClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// The public JWK of an ES256 key, with `fields` over its own.
    static func jwk(_ key: ES256PrivateKey, kid: String, _ fields: [String: JSONValue] = [:]) throws -> JSONValue {
        let parameters = try #require(key.parameters)
        var jwk: [String: JSONValue] = [
            "kty": .string("EC"), "crv": .string("P-256"), "kid": .string(kid), "x": .string(parameters.x), "y": .string(parameters.y),
        ]
        jwk.merge(fields) { $1 }
        return .object(jwk)
    }

    static func serve(_ keys: [JSONValue], from documents: FixedDocuments) throws {
        try documents.store(["issuer": issuer, "jwks_uri": keySetURL], at: discovery)
        try documents.store(["keys": keys], at: keySetURL)
    }

    private func keys(_ documents: FixedDocuments, clock: TestClock) -> IdentityProviderKeys {
        IdentityProviderKeys(fetcher: documents, now: { clock.now }, logger: Logger(label: "identity-provider-keys-tests"))
    }

    @Test("the issuer's discovery document names the key set; RS256 and ES256 signing keys with a kid are kept, the rest left out")
    func keysAreDiscovered() async throws {
        let documents = FixedDocuments()
        try Self.serve([
            try Self.jwk(ES256PrivateKey(), kid: "good"),
            try Self.jwk(ES256PrivateKey(), kid: "good-sig", ["use": .string("sig"), "alg": .string("ES256")]),
            try Self.jwk(ES256PrivateKey(), kid: "encryption", ["use": .string("enc")]),
            try Self.jwk(ES256PrivateKey(), kid: "other-algorithm", ["alg": .string("ES384")]),
            try Self.jwk(ES256PrivateKey(), kid: "private", ["d": .string("AAAA")]),
            try Self.jwk(ES256PrivateKey(), kid: "other-curve", ["crv": .string("P-384")]),
            .object(["kty": .string("RSA"), "kid": .string("small-rsa"), "n": .string(Base64URLCoding.encode(Data(repeating: 0xC5, count: 128))), "e": .string("AQAB")]),
            .object(["kty": .string("oct"), "kid": .string("shared-secret"), "k": .string("c2VjcmV0")]),
            .object(["kty": .string("EC"), "crv": .string("P-256")]),
        ], from: documents)
        let keySet = try await keys(documents, clock: TestClock()).keySet(of: provider, holding: "good")
        #expect(keySet.keyIds == ["good", "good-sig"])
        #expect(documents.reads(of: Self.discovery) == 1 && documents.reads(of: Self.keySetURL) == 1)
    }

    @Test("a discovery document of another issuer, a jwks_uri that is not https, or a key set without a usable key gives no keys: unavailable, with when to try again")
    func wrongDocumentsGiveNoKeys() async throws {
        for (discovery, keys) in [
            (["issuer": "https://idp.notify.test/other", "jwks_uri": Self.keySetURL], [try Self.jwk(ES256PrivateKey(), kid: "k")]),
            (["issuer": Self.issuer, "jwks_uri": "http://idp.notify.test/tenant/keys"], [try Self.jwk(ES256PrivateKey(), kid: "k")]),
            (["issuer": Self.issuer, "jwks_uri": Self.keySetURL], [try Self.jwk(ES256PrivateKey(), kid: "k", ["use": .string("enc")])]),
        ] {
            let documents = FixedDocuments()
            try documents.store(discovery, at: Self.discovery)
            try documents.store(["keys": keys], at: Self.keySetURL)
            do {
                _ = try await self.keys(documents, clock: TestClock()).keySet(of: provider, holding: "k")
                Issue.record("keys were found for \(discovery)")
            } catch {
                #expect(error.retryAfterSeconds >= 1 && error.retryAfterSeconds <= 30, "\(error)")
            }
        }
    }

    @Test("a key set named directly is read without discovery")
    func keySetURLSkipsDiscovery() async throws {
        let documents = FixedDocuments()
        try documents.store(["keys": [try Self.jwk(ES256PrivateKey(), kid: "k")]], at: "https://keys.notify.test/jwks")
        var direct = provider
        direct.jwksUrl = "https://keys.notify.test/jwks"
        #expect(try await keys(documents, clock: TestClock()).keySet(of: direct, holding: "k").keyIds == ["k"])
        #expect(documents.reads(of: Self.discovery) == 0)
    }

    @Test("a key the set lacks makes it read again (a rotation), at most once per 30 s however many unknown keys come; known keys read nothing until the set is an hour old")
    func unknownKeysRefetchAtMostOncePerInterval() async throws {
        let documents = FixedDocuments()
        let clock = TestClock()
        let first = try Self.jwk(ES256PrivateKey(), kid: "first")
        try Self.serve([first], from: documents)
        let keys = keys(documents, clock: clock)
        #expect(try await keys.keySet(of: provider, holding: "first").keyIds == ["first"])

        try Self.serve([first, try Self.jwk(ES256PrivateKey(), kid: "rotated")], from: documents)
        clock.advance(by: .seconds(1))
        #expect(try await keys.keySet(of: provider, holding: "rotated").keyIds == ["first", "rotated"], "the rotated key, at once")
        #expect(documents.reads(of: Self.keySetURL) == 2)

        for index in 0..<20 {
            #expect(try await keys.keySet(of: provider, holding: "made-up-\(index)").keyIds == ["first", "rotated"])
        }
        #expect(documents.reads(of: Self.keySetURL) == 2, "unknown keys within 30 s of the last such read: no read")
        clock.advance(by: .seconds(30))
        _ = try await keys.keySet(of: provider, holding: "made-up")
        #expect(documents.reads(of: Self.keySetURL) == 3, "30 s later, one read")

        _ = try await keys.keySet(of: provider, holding: "first")
        #expect(documents.reads(of: Self.keySetURL) == 3)
        clock.advance(by: .seconds(3600))
        _ = try await keys.keySet(of: provider, holding: "first")
        #expect(documents.reads(of: Self.keySetURL) == 4, "an hour old, the set is read again")
    }

    @Test("while the provider fails, the keys read before keep serving and it is asked at most once per 30 s; with none, callers are told to come back")
    func failingProvider() async throws {
        let documents = FixedDocuments()
        let clock = TestClock()
        let keys = keys(documents, clock: clock)
        await #expect(throws: IdentityProviderKeys.Unavailable.self) { try await keys.keySet(of: provider, holding: "k") }
        await #expect(throws: IdentityProviderKeys.Unavailable.self) { try await keys.keySet(of: provider, holding: "k") }
        #expect(documents.reads(of: Self.discovery) == 1, "no second read within 30 s of a failure")

        clock.advance(by: .seconds(30))
        try Self.serve([try Self.jwk(ES256PrivateKey(), kid: "k")], from: documents)
        #expect(try await keys.keySet(of: provider, holding: "k").keyIds == ["k"])

        try documents.store(["keys": "not a key set"], at: Self.keySetURL)
        clock.advance(by: .seconds(3600))
        #expect(try await keys.keySet(of: provider, holding: "k").keyIds == ["k"], "stale keys serve while the provider answers nonsense")
        let reads = documents.reads(of: Self.keySetURL)
        _ = try await keys.keySet(of: provider, holding: "k")
        #expect(documents.reads(of: Self.keySetURL) == reads, "not asked again within 30 s of the failure")
    }

    @Test("callers arriving together wait for one read")
    func concurrentCallersShareOneRead() async throws {
        let documents = FixedDocuments()
        try Self.serve([try Self.jwk(ES256PrivateKey(), kid: "k")], from: documents)
        let keys = keys(documents, clock: TestClock())
        let provider = provider
        try await withThrowingTaskGroup(of: Set<String>.self) { group in
            for _ in 0..<20 { group.addTask { try await keys.keySet(of: provider, holding: "k").keyIds } }
            for try await keyIds in group { #expect(keyIds == ["k"]) }
        }
        #expect(documents.reads(of: Self.discovery) == 1 && documents.reads(of: Self.keySetURL) == 1)
    }
}
