import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request whose answer arrives piece by piece (for the live stream), through a
/// `URLSessionDataDelegate` because `URLSession.bytes(for:)` does not exist in Linux's FoundationNetworking.
/// Cancelling the iterating task (or dropping the stream) cancels the request.
final class StreamingRequest: NSObject, URLSessionDataDelegate, Sendable {
    enum Part: Sendable {
        case response(HTTPURLResponse)
        case data(Data)
    }

    let parts: AsyncThrowingStream<Part, any Error>
    private let continuation: AsyncThrowingStream<Part, any Error>.Continuation

    private override init() {
        (parts, continuation) = AsyncThrowingStream<Part, any Error>.makeStream()
        super.init()
    }

    /// Starts `request`; its response head and body pieces arrive on `parts`.
    static func start(_ request: URLRequest) -> StreamingRequest {
        let delegate = StreamingRequest()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: request)
        delegate.continuation.onTermination = { _ in
            task.cancel()
            session.invalidateAndCancel()
        }
        task.resume()
        return delegate
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            continuation.yield(.response(http))
            completionHandler(.allow)
        } else {
            continuation.finish(throwing: URLError(.badServerResponse))
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.data(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        session.finishTasksAndInvalidate()
    }
}
