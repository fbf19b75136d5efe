// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension SignetClient {
    /// Sends a request encrypted to the gateway (Oblivious HTTP, RFC 9458, straight to the gateway):
    /// signed first exactly as ``send(_:_:fields:body:sign:)`` would sign it, then encoded as Binary
    /// HTTP and encapsulated to the first key configuration, over the pinned connection to the URL's
    /// origin. The answer is opened and its response signature checked against the signed request.
    ///
    /// When the gateway no longer knows the key (`ohttp_key_unknown`), the key configurations are
    /// fetched again over the same pinned connection and the request is encapsulated once more,
    /// once; any other refusal is returned as it came.
    public func sendOblivious(
        _ method: String,
        _ url: String,
        fields: MessageFields = [],
        body: [UInt8] = []
    ) async throws -> ClientResponse {
        let message = try HTTPMessage.request(method: method, uri: url, fields: fields, body: body)
        let signed = signer != nil ? try await signer!.sign(message, now: gatewayNow) : message
        let target = signed.target!
        let origin = try allowedOrigin(target)
        let binary = BinaryHTTPMessage(
            head: .request(
                method: method,
                scheme: target.scheme,
                authority: target.authority,
                path: Self.originForm(target)
            ),
            fields: signed.fields.lines.filter { !["host", "content-length", "connection"].contains($0.name.lowercased()) }
                .map { BinaryHTTPMessage.Field($0.name, $0.value) },
            content: signed.body
        ).encoded()
        if obliviousKeys.isEmpty { try await refreshObliviousKeys(origin: origin) }
        var refreshed = false
        while true {
            guard let key = obliviousKeys.first else {
                throw SignetError(.ohttpKeyUnknown, "the gateway offers no key configuration this client supports")
            }
            let encapsulated = try ObliviousClientRequest(encapsulating: binary, to: key)
            let outer = try await exchange(
                TransportRequest(
                    origin: origin,
                    method: "POST",
                    path: "/signet/v1/ohttp",
                    fields: [("Content-Type", "message/ohttp-req")],
                    body: encapsulated.bytes
                )
            )
            await deliverPinReports()
            guard outer.status == 200 else {
                if outer.reason == SignetError.Code.ohttpKeyUnknown.rawValue, !refreshed {
                    refreshed = true
                    try await refreshObliviousKeys(origin: origin)
                    continue
                }
                return outer
            }
            let inner = try BinaryHTTPMessage(decoding: try encapsulated.openResponse(outer.body))
            guard case .response(let status) = inner.head else {
                throw SignetError(.decapsulationFailed, "the gateway's answer is not a response")
            }
            var responseFields = MessageFields()
            for field in inner.fields { responseFields.append(name: field.name, value: field.value) }
            var response = ClientResponse(status: status, fields: responseFields, body: inner.content)
            response.signature = try await verifyResponseSignature(response, request: signed)
            return response
        }
    }

    /// Fetches `GET /signet/v1/ohttp-keys` over the pinned connection and uses what it lists.
    public func refreshObliviousKeys(origin: Origin? = nil) async throws {
        let origin = origin ?? configuration.origins[0]
        let raw = try await exchange(TransportRequest(origin: origin, method: "GET", path: "/signet/v1/ohttp-keys"))
        guard raw.status == 200 else {
            throw SignetError(.ohttpKeyUnknown, "the gateway answered \(raw.status) for its key configurations")
        }
        let keys = try OHTTPKeyConfiguration.decodeList(raw.body)
        guard !keys.isEmpty else { throw SignetError(.ohttpKeyUnknown, "the gateway lists no key configuration") }
        obliviousKeys = keys
    }
}
