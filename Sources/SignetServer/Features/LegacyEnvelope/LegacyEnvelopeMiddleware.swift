// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// Encrypted bodies of apps already shipped (the banking seed's JSON `{mac, iv, payload}`, or
/// RNCryptor v3) on the routes configured for them: the MAC is checked before anything is
/// decrypted, and the upstream receives the plaintext. Every failure is `envelope_invalid`. Like the
/// legacy query scheme it has no replay protection of its own; apps move to signatures from here.
struct LegacyEnvelopeMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    let format: GatewayConfiguration.LegacyEnvelope.Format
    let keys: [EnvelopeKey]
    let names: JSONEnvelope.FieldNames
    let plaintextContentType: String
    let maximumBodyBytes: Int
    let metrics: SignetMetrics?

    func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        let body = Array(buffer: try await request.collectBody(upTo: maximumBodyBytes, refusing: "an envelope"))
        let opened =
            switch format {
            case .json: try JSONEnvelope.open(body, keys: keys, names: names)
            case .rncryptor: try RNCryptorV3.open(body, keys: keys)
            }
        var head = request.head
        head.headerFields[.contentType] = plaintextContentType
        head.headerFields[.contentLength] = String(opened.plaintext.count)
        request = Request(head: head, body: .init(buffer: ByteBuffer(bytes: opened.plaintext)))
        return Admission(
            SignetIdentity(deviceID: nil, keyID: "envelope-" + opened.key.version, trustLevel: .sharedSecret, algorithm: "legacy-envelope")
        )
    }
}
