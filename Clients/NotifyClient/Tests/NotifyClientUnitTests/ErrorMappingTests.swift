import Foundation
import NotifyAPI
import Synchronization
import Testing

@testable import NotifyClient

/// What every request carries, the token's refresh on 401, and the errors a caller gets.
@Suite struct ErrorMappingTests {
    @Test("every request carries the user token and the app's id; one token serves until the service refuses it")
    func tokenReused() async throws {
        let service = FakeService { _ in try .ok(Fixture.page([], through: 0)) }
        let tokens = TokenProvider()
        let client = try Fixture.client(service, tokens: tokens)
        _ = try await client.sync()
        _ = try await client.sync()
        #expect(tokens.count == 1)
        #expect(service.requests.map { $0.headers["Authorization"] } == ["Bearer token-1", "Bearer token-1"])
        #expect(service.requests.map { $0.headers[IdentityProvider.appIdHeader] } == [Fixture.appId, Fixture.appId])
    }

    @Test("a 401 asks the provider for a fresh token once and sends the request again")
    func refreshedOnce() async throws {
        let service = FakeService { request in
            request.headers["Authorization"] == "Bearer token-1" ? try .error(401, "unauthorized") : try .ok(Fixture.page([], through: 0))
        }
        let tokens = TokenProvider()
        let client = try Fixture.client(service, tokens: tokens)
        _ = try await client.sync()
        #expect(tokens.count == 2)
        #expect(service.requests.map { $0.headers["Authorization"] } == ["Bearer token-1", "Bearer token-2"])
    }

    @Test("refused again after the refresh, the 401 reaches the caller")
    func refusedTwice() async throws {
        let service = FakeService { _ in try .error(401, "unauthorized") }
        let tokens = TokenProvider()
        let client = try Fixture.client(service, tokens: tokens)
        let error = await #expect(throws: NotifyClientError.self) { try await client.sync() }
        #expect(error?.code == .server)
        #expect(error?.statusCode == 401)
        #expect(tokens.count == 2)
        #expect(service.requests.count == 2)
    }

    @Test("an error answer is a server error with the service's status, code, message and field")
    func serverError() async throws {
        let service = FakeService { _ in try .error(400, "invalid_argument", field: "pushToken") }
        let client = try Fixture.client(service)
        let error = await #expect(throws: NotifyClientError.self) { try await client.subscribe(pushToken: "") }
        #expect(error?.code == .server)
        #expect(error?.statusCode == 400)
        #expect(error?.serverError?.code == "invalid_argument")
        #expect(error?.serverError?.message == "refused: invalid_argument")
        #expect(error?.serverError?.field == "pushToken")
        #expect(error?.description.contains("token-") == false, "no error carries the user token")
    }

    @Test("no answer is a network error carrying the transport's")
    func network() async throws {
        let client = try Fixture.client(FakeService { _ in .offline })
        let error = await #expect(throws: NotifyClientError.self) { try await client.sync() }
        #expect(error?.code == .network)
        #expect((error?.underlying as? URLError)?.code == .notConnectedToInternet)
    }

    @Test("a token provider that fails is a tokenProvider error, and nothing is sent")
    func tokenProviderFails() async throws {
        struct NoSession: Error {}
        let service = FakeService { _ in .status(204) }
        let client = try NotifyClient(
            configuration: .init(baseURL: FakeService.baseURL, appId: Fixture.appId, storageDirectory: Fixture.storage()),
            tokenProvider: { throw NoSession() }, transport: service)
        let error = await #expect(throws: NotifyClientError.self) { try await client.sync() }
        #expect(error?.code == .tokenProvider)
        #expect(error?.underlying is NoSession)
        #expect(service.requests.isEmpty)
    }

    @Test("an answer the client cannot read is an invalidResponse error")
    func unreadable() async throws {
        let client = try Fixture.client(FakeService { _ in .status(200, json: #"{"changes": "not a list"}"#) })
        let error = await #expect(throws: NotifyClientError.self) { try await client.sync() }
        #expect(error?.code == .invalidResponse)
    }

    @Test("an error answer without the service's body (a proxy's page) is still a server error with its status")
    func errorWithoutBody() async throws {
        let client = try Fixture.client(FakeService { _ in .status(502, json: "<html>Bad Gateway</html>") })
        let error = await #expect(throws: NotifyClientError.self) { try await client.sync() }
        #expect(error?.code == .server)
        #expect(error?.statusCode == 502)
        #expect(error?.serverError == nil)
    }
}
