// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// The app token endpoints:
///
/// - `POST /signet/v1/tokens`: a verified device asks for a token (`{"limitedUse": true}` for one
///   that works once) → `201 {"token", "expiresAt"}`. The route goes under whatever middleware
///   establishes the device (a signature of a minimum trust level, or a client certificate).
/// - `GET /signet/v1/jwks`: the published keys, cacheable, so any backend can check tokens with its
///   own JWT library.
public struct SignetTokenRoutes<Context: SignetRequestContextProtocol>: Sendable {
    public let issuer: AppTokenIssuer
    public let devices: any DeviceStore
    private let clock: @Sendable () -> Date

    /// How long verifiers may cache the JWKS: short enough that a next key published at a rotation
    /// reaches them well before it signs.
    public static var jwksMaxAge: Int { 300 }

    /// - Parameters:
    ///   - issuer: Mints the tokens and holds the key ring.
    ///   - devices: Where the asking device's key is read (for `cnf.jkt`).
    ///   - clock: The issue time.
    public init(
        issuer: AppTokenIssuer,
        devices: any DeviceStore,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.issuer = issuer
        self.devices = devices
        self.clock = clock
    }

    /// Adds `POST /signet/v1/tokens` to `group`, which must hold the middleware that verifies the
    /// device.
    public func addIssuing(to group: RouterGroup<Context>) {
        group.post("/signet/v1/tokens") { request, context -> Response in
            try await issue(request, context: context)
        }
    }

    /// Adds `GET /signet/v1/jwks`, open to anyone.
    public func addJWKS(to router: Router<Context>) {
        router.get("/signet/v1/jwks") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/jwk-set+json"
            headers[.cacheControl] = "public, max-age=\(Self.jwksMaxAge)"
            return Response(
                status: .ok,
                headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: issuer.ring.jwks(at: clock())))
            )
        }
    }

    private func issue(_ request: Request, context: Context) async throws -> Response {
        guard let identity = context.signet.identity, let deviceID = identity.deviceID else {
            throw SignetError(.trustLevelInsufficient, "app tokens are for registered devices")
        }
        var request = request
        let body = try await request.collectBody(upTo: 1024, refusing: "a token request")
        var limitedUse = false
        if body.readableBytes > 0 {
            try request.requireJSONContent("a token request with a body")
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                Set(object.keys).isSubset(of: ["limitedUse"]),
                object["limitedUse"].map({ $0 is Bool }) ?? true
            else {
                throw SignetError(.malformedMessage, #"a token request is empty or {"limitedUse": true|false}"#)
            }
            limitedUse = object["limitedUse"] as? Bool ?? false
        }
        guard let device = try await devices.device(id: deviceID), device.status == .active else {
            throw SignetError(.keyRevoked, "the device \(deviceID) is revoked")
        }
        let (token, claims) = try await issuer.issue(
            deviceID: deviceID,
            keyID: device.keyID,
            trustLevel: identity.trustLevel,
            deviceKey: try JWK(json: Array(device.publicKeyJWK.utf8)),
            limitedUse: limitedUse,
            now: clock()
        )
        var response = try JSONResponse.make(object: ["token": token, "expiresAt": JSONResponse.rfc3339(claims.exp)], status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
