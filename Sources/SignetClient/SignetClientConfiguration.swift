// SPDX-License-Identifier: Apache-2.0
import Foundation
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

/// A TLS client identity: certificate chain (leaf first) and private key, both PEM.
public struct ClientIdentity: Sendable {
    public var certificateChainPEM: String
    public var privateKeyPEM: String

    public init(certificateChainPEM: String, privateKeyPEM: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }
}

/// A response as the client received it.
public struct ClientResponse: Sendable {
    public var status: Int
    public var fields: MessageFields
    public var body: [UInt8]
    /// The response signature, when one verified.
    public var signature: VerifiedSignature?

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The `reason` of a problem+json body (`nil` for other bodies).
    public var reason: String? {
        json?["reason"] as? String
    }

    /// The body as a JSON object, if it is one.
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}
