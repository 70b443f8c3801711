import Hummingbird

/// Answers Hummingbird's own errors in the API's error shape, `{"error": {"code", "message"}}` with
/// `application/json`, as the OpenAPI description promises for every answer: a path no route matches (an empty path
/// segment, an unknown path) got a bare 404 with no body before, which schemathesis flagged on every operation.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            if error.status == .notFound {
                throw APIFailure(.notFound, code: "not_found", message: "no such resource: \(request.method) \(request.uri.path)")
            }
            throw APIFailure(
                error.status, code: error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_"),
                message: error.body ?? error.status.reasonPhrase)
        }
    }
}
