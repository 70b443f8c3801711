import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import Yams

@testable import IngestCore

/// The OpenAPI description (Services/ingest/openapi.yaml) against the code: the operations the router registers and
/// the ones the description has, both ways, so neither can drift from the other.
@Suite struct OpenAPIDescriptionTests {
    /// The description's file, beside the ingest targets.
    private static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Services/ingest/openapi.yaml")

    private static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    /// `METHOD /path/{param}` of every operation in the description.
    private static func describedOperations() throws -> Set<String> {
        let document = try #require(try Yams.load(yaml: OpenAPIDocument.yaml) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var operations = Set<String>()
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys where methods.contains(method) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    @Test("ingest serves the description in openapi.yaml (embedded at build time by the EmbedOpenAPI plugin)")
    func embeddedDocumentIsTheFile() throws {
        let file = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(OpenAPIDocument.yaml + "\n" == file, "the build embeds openapi.yaml as it is: is the build older than the file?")
    }

    @Test("every route is described, and every described operation is a route")
    func routesAndDescriptionMatch() throws {
        let router = buildRouter(try RouteTesting().dependencies(logger: Logger(label: "openapi-tests")))
        var routed = Set(router.routes.map { route in
            let path = route.path.description.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
            }.joined(separator: "/")
            return "\(route.method.rawValue) \(path)"
        })
        // Added by buildIngest beside the router's routes (the metrics endpoint on the same port).
        routed.insert("GET /metrics")
        let described = try Self.describedOperations()
        #expect(routed.subtracting(described).sorted() == [], "routes the description lacks")
        #expect(described.subtracting(routed).sorted() == [], "described operations no route serves")
    }

    @Test("GET /openapi.yaml answers the description")
    func servedOverHTTP() async throws {
        try await RouteTesting().run { client in
            let response = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/yaml")
            #expect(String(buffer: response.body).hasPrefix("openapi: 3.1.0"))
        }
    }

    @Test("a path no route serves is answered 404 not_found in the API's JSON error shape (an empty path segment too)")
    func unknownPath() async throws {
        try await RouteTesting().run { client in
            for uri in ["/v1/apps/app_x/nothing-here", "/v1/nothing-here", "/v1/apps//notifications/x/y/z"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .notFound, "\(uri)")
                #expect(response.headers[.contentType] == "application/json; charset=utf-8" || response.headers[.contentType] == "application/json", "\(uri)")
                #expect(String(buffer: response.body).contains(#""code":"not_found""#), "\(uri)")
            }
        }
    }
}
