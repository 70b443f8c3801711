import NIOCore
import NIOHPACK
import NIOHTTP2
import NotifyModels

/// Builds the HTTP/2 requests of one app's pushes. What every push of the app shares (authority, provider token,
/// topic) is worked out once per batch; what each push has of its own (path, apns-id) is sent without HPACK
/// indexing, so it does not push the shared headers, the provider token above all, out of the connection's header
/// table. Only what APNs reads is sent: no `content-type` (APNs takes JSON only) and no `content-length` (optional
/// in HTTP/2, where the DATA frame's END_STREAM ends the body), since every header costs HPACK and validation work
/// at both ends of every push. The payloads of a batch share one buffer.
public struct APNsRequestBuilder {
    private let authority: String
    private let devicePathPrefix: String
    private let authorization: String
    private let topic: String
    private let voipTopic: String

    public init(endpoint: APNsTransportEndpoint, token: String, topic: String) {
        authority = endpoint.authority
        devicePathPrefix = endpoint.devicePathPrefix
        authorization = "bearer " + token
        self.topic = topic
        // PushKit: the app's topic with `.voip`.
        voipTopic = topic + ".voip"
    }

    public func requests(for jobs: [PushJob]) -> [APNsTransportRequest] {
        let payloads = Self.payloads(of: jobs)
        var requests: [APNsTransportRequest] = []
        requests.reserveCapacity(jobs.count)
        var offset = payloads.readerIndex
        for job in jobs {
            let length = job.payload.utf8.count
            // In range by construction: `payloads` holds every payload, in order.
            let body = payloads.getSlice(at: offset, length: length)!
            offset += length
            requests.append(APNsTransportRequest(headers: .init(headers: headers(for: job)), body: body))
        }
        return requests
    }

    private func headers(for job: PushJob) -> HPACKHeaders {
        let pushType: String
        let priority: String
        let pushTopic: String
        if job.platform == .apnsVoip {
            // Delivered at once unless the publisher asked for low priority.
            pushTopic = voipTopic
            pushType = "voip"
            priority = job.priority == .high ? "10" : "5"
        } else {
            pushTopic = topic
            pushType = job.isAlert ? "alert" : "background"
            priority = job.isAlert && job.priority == .high ? "10" : "5"
        }
        var headers = HPACKHeaders()
        headers.reserveCapacity(11)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        headers.add(name: ":path", value: devicePathPrefix + job.deviceToken, indexing: .nonIndexable)
        headers.add(name: "authorization", value: authorization)
        headers.add(name: "apns-topic", value: pushTopic)
        headers.add(name: "apns-push-type", value: pushType)
        headers.add(name: "apns-priority", value: priority)
        headers.add(name: "apns-expiration", value: String(Int(job.expiration.timeIntervalSince1970)))
        headers.add(name: "apns-collapse-id", value: job.collapseId)
        headers.add(name: "apns-id", value: job.pushId.lowercasedString, indexing: .nonIndexable)
        return headers
    }

    /// Every payload, one after the other, in one buffer: written in full before any slice is taken, since a write
    /// into a buffer that slices share would copy it.
    private static func payloads(of jobs: [PushJob]) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: jobs.reduce(0) { $0 + $1.payload.utf8.count })
        for job in jobs {
            buffer.writeString(job.payload)
        }
        return buffer
    }
}
