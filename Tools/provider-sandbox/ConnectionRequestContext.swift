import Hummingbird
import NIOCore

/// Request context of the providers listener: Hummingbird's core context plus the connection the request
/// arrived on, for faults that drop the connection.
struct ConnectionRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let connection: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        // An HTTP/2 stream's parent is its connection, whose parent is the listening socket; an
        // HTTP/1.1 request's channel is the connection itself (its parent is the listening socket).
        if let parent = source.channel.parent, parent.parent != nil {
            connection = parent
        } else {
            connection = source.channel
        }
    }
}
