import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Feeds a back end serves for the service to poll (poll ingestion): the test stores a document under a name, the
/// service GETs it. The next `failures` requests are answered 503, as a failing back end would; every request is
/// counted, with the last Authorization header it carried. A feed stored with `delay` (seconds) answers each request
/// only after that long, as a back end that hangs.
final class FeedServer: Sendable {
    struct Log: Codable, Sendable {
        var requests: Int
        var failed: Int
        var lastAuthorization: String?
    }

    private struct Feed {
        var document: ByteBuffer
        var failuresLeft: Int
        var delaySeconds: Int
        var log: Log
    }

    private let feeds = Mutex<[String: Feed]>([:])

    func register(on router: Router<BasicRequestContext>) {
        router.put("feeds/{name}") { request, context in
            let name = context.parameters.get("name") ?? ""
            let document = try await request.body.collect(upTo: 1 << 20)
            let failures = request.uri.queryParameters.get("fail").flatMap(Int.init) ?? 0
            let delay = request.uri.queryParameters.get("delay").flatMap { Int($0) } ?? 0
            self.feeds.withLock { feeds in
                let log = feeds[name]?.log ?? Log(requests: 0, failed: 0, lastAuthorization: nil)
                feeds[name] = Feed(document: document, failuresLeft: failures, delaySeconds: delay, log: log)
            }
            return Response(status: .noContent)
        }
        router.get("feeds/{name}") { request, context in
            let name = context.parameters.get("name") ?? ""
            let authorization = request.headers[.authorization]
            let delay = self.feeds.withLock { $0[name]?.delaySeconds ?? 0 }
            let answer: ByteBuffer?? = self.feeds.withLock { feeds in
                guard var feed = feeds[name] else { return nil }
                feed.log.requests += 1
                feed.log.lastAuthorization = authorization
                defer { feeds[name] = feed }
                if feed.failuresLeft > 0 {
                    feed.failuresLeft -= 1
                    feed.log.failed += 1
                    return .some(nil)
                }
                return .some(feed.document)
            }
            // Counted as it arrives, answered after the delay.
            if delay > 0 { try await Task.sleep(for: .seconds(delay)) }
            switch answer {
            case nil: return Response(status: .notFound)
            case .some(nil): return Response(status: .serviceUnavailable)
            case .some(let document?):
                return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: document))
            }
        }
        router.get("feeds/{name}/log") { _, context in
            let name = context.parameters.get("name") ?? ""
            guard let log = self.feeds.withLock({ $0[name]?.log }) else { return Response(status: .notFound) }
            let body = try JSONEncoder().encode(log)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
