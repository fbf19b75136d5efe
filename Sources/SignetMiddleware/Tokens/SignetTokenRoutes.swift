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
///   that works once) → `201 {"token", "expiresAt", "tokenType"}`. With a `DPoP` proof by the
///   device key (RFC 9449 §5) the token is DPoP-bound (`tokenType: DPoP`). An App Attest key signs
///   only assertions, so an App Attest device binds the token to a key of its own instead: the
///   proof's, which the device's signature names by covering the `DPoP` field. The route goes under
///   whatever middleware establishes the device (a signature of a minimum trust level, or a client
///   certificate).
/// - `GET /signet/v1/jwks`: the published keys, cacheable, so any backend can check tokens with its
///   own JWT library.
public struct SignetTokenRoutes<Context: SignetRequestContextProtocol>: Sendable {
    public let issuer: AppTokenIssuer
    public let devices: any DeviceStore
    /// Checks the proof of a request for a DPoP-bound token; such requests are refused without it.
    public let dpop: DPoPVerifier?
    private let clock: @Sendable () -> Date

    /// How long verifiers may cache the JWKS: short enough that a next key published at a rotation
    /// reaches them well before it signs.
    public static var jwksMaxAge: Int { 300 }

    /// - Parameters:
    ///   - issuer: Mints the tokens and holds the key ring.
    ///   - devices: Where the asking device's key is read (for `cnf.jkt`).
    ///   - dpop: Checks the proof of a request for a DPoP-bound token.
    ///   - clock: The issue time.
    public init(
        issuer: AppTokenIssuer,
        devices: any DeviceStore,
        dpop: DPoPVerifier? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.issuer = issuer
        self.devices = devices
        self.dpop = dpop
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
        let deviceKey = try JWK(json: Array(device.publicKeyJWK.utf8))
        let now = clock()
        // RFC 9449 §5: a proof on the token request binds the token to its key (the key `cnf.jkt`
        // names either way), which is the device's own, or for an App Attest device the one its
        // assertion named.
        var bound = false
        var boundKey = deviceKey
        if request.headers[DPoPVerifier.proofField] != nil {
            guard let dpop else { throw SignetError(.dpopProofInvalid, "this gateway issues no DPoP-bound tokens") }
            if identity.trustLevel == .appAttest {
                boundKey = try await Self.namedProofKey(request, identity: identity, dpop: dpop, receivedTarget: context.signet.receivedTarget, now: now)
            } else {
                _ = try await dpop.check(
                    request,
                    receivedTarget: context.signet.receivedTarget,
                    accessToken: nil,
                    boundTo: try deviceKey.thumbprint,
                    requireNonce: false,
                    now: now
                )
            }
            bound = true
        }
        let (token, claims) = try await issuer.issue(
            deviceID: deviceID,
            keyID: device.keyID,
            trustLevel: identity.trustLevel,
            deviceKey: boundKey,
            limitedUse: limitedUse,
            dpopBound: bound,
            now: now
        )
        var response = try JSONResponse.make(
            object: ["token": token, "expiresAt": JSONResponse.rfc3339(claims.exp), "tokenType": bound ? "DPoP" : "Bearer"],
            status: .created
        )
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The key an App Attest device binds its token to: its DPoP proof's, named by the device's
    /// assertion covering the `DPoP` field — without that coverage anyone holding the request
    /// before it was sent could have put their own proof on it. The proof is claimed once, as any.
    static func namedProofKey(_ request: Request, identity: SignetIdentity, dpop: DPoPVerifier, receivedTarget: String?, now: Date) async throws
        -> JWK
    {
        guard identity.components.contains("\"dpop\"") else {
            throw ChallengedRefusal(
                SignetError(.dpopKeyMismatch, "an App Attest key signs only assertions: its signature names the key to bind by covering the DPoP field"),
                challenges: [DPoPVerifier.challenge(error: "invalid_dpop_proof")]
            )
        }
        let proof = try dpop.proof(request, receivedTarget: receivedTarget, accessToken: nil, now: now)
        try await dpop.claim(proof, now: now)
        return proof.key.jwk
    }
}
