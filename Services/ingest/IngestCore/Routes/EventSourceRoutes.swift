import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// Event sources and their members.
///
/// The app server (API key) defines sources (`/v1/apps/{appId}/event-sources[/{name}]`), enrols or removes a user's
/// devices or one device, and asks whether a user is in a source. A device (user token) joins an `open` source and
/// leaves any (`/v1/me/subscriptions/{subscriptionId}/event-sources/{name}`).
struct EventSourceRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let devices: any DeviceStore

    private struct Listing: Encodable {
        var eventSources: [EventSourceView]
    }

    private struct Memberships: Encodable {
        var eventSources: [EventSourceMembership]
    }

    func register(on router: Router<BasicRequestContext>) {
        let app = "/v1/apps/:appId"
        router.post("\(app)/event-sources") { request, context in try await define(request, appId: try context.parameters.require("appId")) }
        router.get("\(app)/event-sources") { request, context in try await list(request, appId: try context.parameters.require("appId")) }
        router.get("\(app)/event-sources/:name") { request, context in
            try await show(request, appId: try context.parameters.require("appId"), name: try context.parameters.require("name"))
        }
        router.delete("\(app)/event-sources/:name") { request, context in
            try await delete(request, appId: try context.parameters.require("appId"), name: try context.parameters.require("name"))
        }
        for (method, join) in [(HTTPRequest.Method.put, true), (.delete, false)] {
            router.on("\(app)/users/:userId/event-sources/:name", method: method) { request, context in
                try await enrolUser(
                    request, appId: try context.parameters.require("appId"), userId: try context.parameters.require("userId"),
                    name: try context.parameters.require("name"), join: join)
            }
            router.on("\(app)/subscriptions/:subscriptionId/event-sources/:name", method: method) { request, context in
                try await enrolDevice(
                    request, appId: try context.parameters.require("appId"), subscriptionId: try context.parameters.require("subscriptionId"),
                    name: try context.parameters.require("name"), join: join)
            }
            router.on("/v1/me/subscriptions/:subscriptionId/event-sources/:name", method: method) { request, context in
                try await deviceMembership(
                    request, subscriptionId: try context.parameters.require("subscriptionId"), name: try context.parameters.require("name"), join: join)
            }
        }
        router.get("\(app)/users/:userId/event-sources") { request, context in
            try await userMemberships(request, appId: try context.parameters.require("appId"), userId: try context.parameters.require("userId"))
        }
        router.get("\(app)/users/:userId/event-sources/:name") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
            let name = try context.parameters.require("name")
            _ = try await requireSource(appId: appId, name: name)
            let userId = try context.parameters.require("userId")
            let membership = try await memberships(appId: appId, userId: userId)[name]
            return try JSONResponse.make(.ok, Self.view(name, membership))
        }
    }

    // MARK: Sources

    private func define(_ request: Request, appId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        let body = try await JSONResponse.decode(EventSourceRequest.self, from: request)
        let (name, policy, description) = try validated(body)
        let existed = try await source(appId: appId, name: name) != nil
        let record = EventSourceRecord(appId: appId, name: name, policy: policy, description: description, createdAt: Date())
        _ = try await visibility.send(StorageCommand(action: .putEventSource(record))) { [devices] in
            try await devices.eventSources(appId: appId, named: name).first { $0.policy == policy }
        }
        let stored = try await source(appId: appId, name: name)
        return try JSONResponse.make(
            existed ? .ok : .created,
            stored ?? EventSourceView(name: name, policy: policy, description: description, memberDevices: 0, memberUsers: 0, createdAt: record.createdAt),
            headers: [.location: "/v1/apps/\(appId)/event-sources/\(name)"])
    }

    private func validated(_ body: EventSourceRequest) throws(APIFailure) -> (String, EventSourcePolicy, String?) {
        do {
            return try body.validated()
        } catch {
            throw APIFailure(error)
        }
    }

    private func list(_ request: Request, appId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
        return try JSONResponse.make(.ok, Listing(eventSources: try await sources(appId: appId, name: nil)))
    }

    private func show(_ request: Request, appId: String, name: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
        return try JSONResponse.make(.ok, try await requireSource(appId: appId, name: name))
    }

    private func delete(_ request: Request, appId: String, name: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        _ = try await requireSource(appId: appId, name: name)
        let gone = try await visibility.send(StorageCommand(action: .deleteEventSource(appId: appId, name: name))) { [devices] in
            try await devices.eventSources(appId: appId, named: name).isEmpty ? true : nil
        }
        return Response(status: gone != nil ? .noContent : .accepted)
    }

    // MARK: Members

    /// Puts every device of the user in the source, or takes them out.
    private func enrolUser(_ request: Request, appId: String, userId: String, name: String, join: Bool) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        let parameters = join ? try await Self.membershipParameters(request) : nil
        _ = try await requireSource(appId: appId, name: name)
        let userDevices: [DeviceListing]
        do {
            userDevices = try await devices.devices(appId: appId, userId: userId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        try await change(appId: appId, name: name, subscriptionIds: userDevices.map(\.subscriptionId), join: join, parameters: parameters)
        return try JSONResponse.make(.ok, Self.view(name, try await memberships(appId: appId, userId: userId)[name]))
    }

    /// Puts one device of the app in the source, or takes it out.
    private func enrolDevice(_ request: Request, appId: String, subscriptionId text: String, name: String, join: Bool) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        let subscriptionId = try Self.subscriptionId(text)
        let parameters = join ? try await Self.membershipParameters(request) : nil
        _ = try await requireSource(appId: appId, name: name)
        guard let userId = try await owner(appId: appId, subscriptionId: subscriptionId) else {
            throw APIFailure(.notFound, code: "subscription_not_found", message: "no subscription \(subscriptionId.lowercasedString) of this app", field: "subscriptionId")
        }
        try await change(appId: appId, name: name, subscriptionIds: [subscriptionId], join: join, parameters: parameters)
        let membership = try await memberships(appId: appId, userId: userId)[name]
        var view = Self.view(name, membership)
        view.subscribed = membership?.subscriptionIds.contains(subscriptionId) ?? false
        return try JSONResponse.make(.ok, view)
    }

    /// A device joins an open source, or leaves any.
    private func deviceMembership(_ request: Request, subscriptionId text: String, name: String, join: Bool) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let subscriptionId = try Self.subscriptionId(text)
        guard try await owner(appId: user.appId, subscriptionId: subscriptionId) == user.userId else {
            throw APIFailure(.notFound, code: "subscription_not_found", message: "no subscription \(subscriptionId.lowercasedString) of this user", field: "subscriptionId")
        }
        let source = try await requireSource(appId: user.appId, name: name)
        if join, source.policy != .open {
            throw APIFailure(.forbidden, code: "forbidden", message: "only the app server enrols devices in \(name)", field: "eventSource")
        }
        let parameters = join ? try await Self.membershipParameters(request) : nil
        try await change(appId: user.appId, name: name, subscriptionIds: [subscriptionId], join: join, parameters: parameters)
        return Response(status: .noContent)
    }

    private func userMemberships(_ request: Request, appId: String, userId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
        let found = try await memberships(appId: appId, userId: userId)
        return try JSONResponse.make(.ok, Memberships(eventSources: found.keys.sorted().map { Self.view($0, found[$0]) }))
    }

    /// A user's membership in `name` as the API answers it.
    private static func view(_ name: String, _ membership: MembershipListing?) -> EventSourceMembership {
        EventSourceMembership(
            eventSource: name, subscribed: !(membership?.subscriptionIds.isEmpty ?? true), subscriptionIds: membership?.subscriptionIds ?? [],
            parameters: membership?.parameters)
    }

    /// The parameters a join's body gives (`{"parameters": {...}}`); nil for an empty body or none given.
    private static func membershipParameters(_ request: Request) async throws -> [String: JSONValue]? {
        guard let parameters = try await JSONResponse.decodeOptional(MembershipRequest.self, from: request)?.parameters else { return nil }
        do {
            try MembershipParameters.validate(parameters, field: "parameters", maximumKeys: MembershipParameters.maximumKeys)
        } catch {
            throw APIFailure(error)
        }
        return parameters
    }

    /// Sends the join or leave and waits until storage applied it.
    private func change(appId: String, name: String, subscriptionIds: [UUID], join: Bool, parameters: [String: JSONValue]? = nil) async throws {
        guard !subscriptionIds.isEmpty else { return }
        let command = join
            ? StorageCommand(action: .joinEventSource(appId: appId, name: name, subscriptionIds: subscriptionIds, parameters: parameters))
            : StorageCommand(action: .leaveEventSource(appId: appId, name: name, subscriptionIds: subscriptionIds))
        // Waits for storage's word that it applied the command (there is nothing more to read).
        _ = try await visibility.send(command) { true }
    }

    // MARK: Reading

    private func requireSource(appId: String, name: String) async throws -> EventSourceView {
        guard let source = try await source(appId: appId, name: name) else {
            throw APIFailure(.notFound, code: "event_source_not_found", message: "no event source \(name) in this app", field: "eventSource")
        }
        return source
    }

    private func source(appId: String, name: String) async throws -> EventSourceView? {
        try await sources(appId: appId, name: name).first
    }

    /// The app's sources (or the one named) with their member counts.
    private func sources(appId: String, name: String?) async throws -> [EventSourceView] {
        do {
            return try await devices.eventSources(appId: appId, named: name)
        } catch {
            throw APIFailure.databaseUnavailable
        }
    }

    /// The sources the user's devices are in, with the devices.
    private func memberships(appId: String, userId: String) async throws -> [String: MembershipListing] {
        do {
            return try await devices.memberships(appId: appId, userId: userId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
    }

    /// The user the app's subscription belongs to.
    private func owner(appId: String, subscriptionId: UUID) async throws -> String? {
        do {
            return try await devices.owner(appId: appId, subscriptionId: subscriptionId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
    }

    private static func subscriptionId(_ text: String) throws(APIFailure) -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw APIFailure(ValidationError.invalid("subscriptionId", "subscriptionId must be a UUID"))
        }
        return id
    }
}
