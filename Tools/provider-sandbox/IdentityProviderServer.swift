import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// OpenID Connect providers' documents for the service to read (an app's sign-in provider's stand-in): a test stores a
/// key set (JWKS) under a name with `PUT /idp/{name}/jwks`; the provider's issuer is then `<this origin>/idp/{name}`,
/// its discovery document `GET /idp/{name}/.well-known/openid-configuration` (`issuer`, `jwks_uri`) and its key set
/// `GET /idp/{name}/jwks`. Every read of either is counted (`GET /idp/{name}/log`), so a test sees how often the
/// service fetched. The tokens are minted by the test itself, with the private keys it kept.
final class IdentityProviderServer: Sendable {
    struct Log: Codable, Sendable {
        var discoveryRequests: Int
        var keySetRequests: Int
    }

    private struct Provider {
        var keySet: ByteBuffer
        var log = Log(discoveryRequests: 0, keySetRequests: 0)
    }

    private let providers = Mutex<[String: Provider]>([:])

    func register(on router: Router<BasicRequestContext>) {
        router.put("idp/{name}/jwks") { request, context in
            let name = context.parameters.get("name") ?? ""
            let keySet = try await request.body.collect(upTo: 1 << 20)
            self.providers.withLock { providers in
                providers[name] = Provider(keySet: keySet, log: providers[name]?.log ?? Log(discoveryRequests: 0, keySetRequests: 0))
            }
            return Response(status: .noContent)
        }
        router.get("idp/{name}/jwks") { _, context in
            let name = context.parameters.get("name") ?? ""
            let keySet: ByteBuffer? = self.providers.withLock { providers in
                providers[name]?.log.keySetRequests += 1
                return providers[name]?.keySet
            }
            guard let keySet else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: keySet))
        }
        router.get("idp/{name}/.well-known/openid-configuration") { request, context in
            let name = context.parameters.get("name") ?? ""
            let known = self.providers.withLock { providers in
                providers[name]?.log.discoveryRequests += 1
                return providers[name] != nil
            }
            guard known, let host = request.head.authority else { return Response(status: .notFound) }
            let issuer = "http://\(host)/idp/\(name)"
            let document = try JSONEncoder().encode(["issuer": issuer, "jwks_uri": "\(issuer)/jwks"])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: document)))
        }
        router.get("idp/{name}/log") { _, context in
            let name = context.parameters.get("name") ?? ""
            guard let log = self.providers.withLock({ $0[name]?.log }) else { return Response(status: .notFound) }
            let body = try JSONEncoder().encode(log)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
