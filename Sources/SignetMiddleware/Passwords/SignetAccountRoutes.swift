// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// `PUT /signet/v1/users/{name}` (`{"password": "…"}` → `201` created, `204` changed) and
/// `DELETE /signet/v1/users/{name}` (→ `204`, the user's devices revoked with it), both with the
/// admin bearer token. The name is percent-decoded from the path.
///
/// The password is never stored: a PBKDF2 hash for Basic and the Digest `HA1` per configured
/// algorithm (`AccountRecord.make(name:password:realm:algorithms:basicIterations:now:)`), computed
/// off the event loops.
public struct SignetAccountRoutes<Context: SignetRequestContextProtocol>: Sendable {
    let authenticator: PasswordAuthenticator
    let store: any AccountStore
    let admin: AdminAccess
    let keyCache: DeviceKeyCache?
    let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - authenticator: Makes the stored values as password login reads them.
    ///   - store: Where accounts live.
    ///   - admin: The admin bearer token and its failed attempts; no token turns both routes off (`not_found`).
    ///   - keyCache: The verification middleware's key cache, emptied when a user's devices are revoked.
    ///   - clock: The time accounts are stamped with and devices revoked at.
    public init(
        authenticator: PasswordAuthenticator,
        store: any AccountStore,
        admin: AdminAccess,
        keyCache: DeviceKeyCache? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.authenticator = authenticator
        self.store = store
        self.admin = admin
        self.keyCache = keyCache
        self.clock = clock
    }

    /// The largest body of `PUT /signet/v1/users/{name}`.
    public static var maximumBodyBytes: Int { 4096 }

    public func add(to router: some RouterMethods<Context>) {
        router.put("/signet/v1/users/:name") { request, context in
            var request = request
            try await admin.authorize(request, source: context.clientAddress, now: clock())
            return try await put(name: try Self.name(context), request: &request)
        }
        router.delete("/signet/v1/users/:name") { request, context in
            try await admin.authorize(request, source: context.clientAddress, now: clock())
            let name = try Self.name(context)
            guard try await store.deleteAccount(name: name, at: clock()) else {
                throw SignetError(.notFound, "no user \(name.debugDescription)")
            }
            authenticator.basicCache.remove(user: name)
            keyCache?.invalidateAll()
            return Response(status: .noContent)
        }
    }

    private func put(name: String, request: inout Request) async throws -> Response {
        try request.requireJSONContent("a user")
        let body = try await request.collectBody(upTo: Self.maximumBodyBytes, refusing: "a user")
        guard let object = try? JSONSerialization.jsonObject(with: Data(Array(buffer: body))) as? [String: Any],
            let password = object["password"] as? String, object.count == 1
        else { throw SignetError(.malformedMessage, "the body is {\"password\": \"…\"} and nothing else") }
        let account = try await authenticator.account(name: name, password: password, now: clock())
        let created = try await store.putAccount(account)
        authenticator.basicCache.remove(user: name)
        guard created else { return Response(status: .noContent) }
        return try JSONResponse.make(["user": name], status: .created)
    }

    static func name(_ context: Context) throws -> String {
        guard let raw = context.parameters.get("name"), let name = raw.removingPercentEncoding else {
            throw SignetError(.malformedMessage, "the user name is not valid percent-encoded UTF-8")
        }
        try AccountName.validate(name)
        return name
    }
}
