// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetCore

/// What a ``SignetClient`` may talk to and how it checks the answers.
public struct SignetClientConfiguration: Sendable {
    /// The only origins requests (and redirects) may go to. The first is the default for
    /// registration and pin reports.
    public var origins: [Origin]
    /// Roots and pin sets for https origins.
    public var trust: ServerTrustEvaluator
    /// A client certificate chain and its private key (PEM) for mutual TLS.
    public var clientIdentity: ClientIdentity?
    /// Keys of the server's response signatures; when set, a signed response must verify.
    public var responseKeys: KeyRing?
    /// Refuse responses without a signature (needs ``responseKeys``).
    public var requireSignedResponses: Bool
    /// Where pin failure reports go: a path on the first origin (the app's own server, never a third
    /// party); `nil` keeps them in ``SignetClient/pendingPinReports`` only.
    public var pinReportPath: String?
    public var timeout: Duration
    public var maximumResponseBytes: Int
    /// Redirects followed within the configured origins.
    public var maximumRedirects: Int
    /// The gateway's Oblivious HTTP key configurations compiled into the app, for
    /// `SignetClient/sendOblivious(_:_:fields:body:)`; refreshed from the gateway when it no
    /// longer knows them.
    public var obliviousKeys: [OHTTPKeyConfiguration] = []
    /// Signed trust documents that replace the pin sets of `trust` without an app release.
    public var trustUpdates: TrustUpdates?
    /// Path prefixes of gateway routes that take an app token (`access: "app-token"`): requests
    /// there carry `Signet-Token` (under ``dpopPaths``, `Authorization: DPoP` and a proof) instead
    /// of a signature, the token fetched, cached and renewed by
    /// the client (``SignetClient/appToken(origin:limitedUse:dpopBound:)``).
    public var appTokenPaths: [String] = []
    /// Path prefixes among ``appTokenPaths`` whose routes take DPoP-bound tokens (`dpop` or
    /// `dpopNonce`): requests there carry `Authorization: DPoP` and a proof made with the device key
    /// (``DPoPSigning``), and follow the gateway's `DPoP-Nonce`.
    public var dpopPaths: [String] = []
    /// Path prefixes of gateway routes that take a client attestation (`access:
    /// "client-attestation"`): requests there carry `OAuth-Client-Attestation` and a PoP made with
    /// the device key (``ClientAttestationSigning``) instead of a signature, the attestation fetched,
    /// cached and renewed by the client (``SignetClient/clientAttestation(origin:)``), the gateway's
    /// challenges followed.
    public var clientAttestationPaths: [String] = []
    /// What PoPs name as `aud` on ``clientAttestationPaths``; the audience the gateway gives with
    /// each attestation when `nil`.
    public var clientAttestationAudience: String?
    /// The gateway's `tokens.issuer`, the attester's name: an App Attest install, whose key signs
    /// only assertions, asks for its proof key to be attested with a PoP for the attester's issuing
    /// endpoint under it (``ClientAttestationSigning/namedKey``). The origin asked when `nil`.
    public var attesterIssuer: String?
    /// When requests are sent again: failures to reach the gateway, `503`, `Retry-After`, with
    /// backoff and jitter, never a request that may have been executed unless its method is
    /// idempotent (``RequestRetry``).
    public var retry = RequestRetry()
    /// Register again and resend when the gateway answers `key_revoked` (a client started with
    /// ``SignetClient/start(with:origin:)``): for apps whose operators revoke devices to make them
    /// re-attest, not to lock them out. Off by default: a revocation then reaches the app.
    public var reregisterRevokedDevices = false
    /// How long before its expiry a cached app token is replaced.
    public var appTokenRenewal: Duration = .seconds(60)
    /// Where the client says what it does, at `debug`: connections, requests (method, origin and
    /// path — never a field value, a key, a token or a password), answers, registrations, trust
    /// updates. Silent at the default `info`. On Apple platforms it writes to the unified log
    /// (subsystem `signet`, category `signet.client`: Console, Xcode) rather than standard error.
    public var logger = SignetClientConfiguration.defaultLogger

    /// The unified log on Apple platforms (``OSLogHandler``), swift-log's bootstrap elsewhere.
    static var defaultLogger: Logger {
        #if canImport(os) && canImport(Darwin)
        Logger(label: "signet.client") { OSLogHandler(subsystem: "signet", category: $0) }
        #else
        Logger(label: "signet.client")
        #endif
    }
    /// What carries the requests: `URLSession` on Apple platforms, the client's own SwiftNIO
    /// connections elsewhere (``SignetTransport/platformDefault``).
    public var transport: SignetTransport = .platformDefault

    public init(
        origins: [Origin],
        trust: ServerTrustEvaluator = ServerTrustEvaluator(),
        clientIdentity: ClientIdentity? = nil,
        responseKeys: KeyRing? = nil,
        requireSignedResponses: Bool = false,
        pinReportPath: String? = "/signet/v1/pin-reports",
        timeout: Duration = .seconds(30),
        maximumResponseBytes: Int = 8 << 20,
        maximumRedirects: Int = 5
    ) {
        self.origins = origins
        self.trust = trust
        self.clientIdentity = clientIdentity
        self.responseKeys = responseKeys
        self.requireSignedResponses = requireSignedResponses
        self.pinReportPath = pinReportPath
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
        self.maximumRedirects = maximumRedirects
    }
}
