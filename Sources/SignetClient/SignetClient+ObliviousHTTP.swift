// SPDX-License-Identifier: Apache-2.0
import NIOHTTP1
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
        let signed = signer != nil ? try await signer!.sign(message, now: clock()) : message
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
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/signet/v1/ohttp")
            head.headers.add(name: "Host", value: target.authority)
            head.headers.add(name: "Content-Type", value: "message/ohttp-req")
            head.headers.add(name: "Content-Length", value: String(encapsulated.bytes.count))
            let raw = try await execute(origin: origin, head: head, body: encapsulated.bytes)
            await deliverPinReports()
            guard raw.head.status == .ok else {
                let outer = Self.response(raw)
                if outer.reason == SignetError.Code.ohttpKeyUnknown.rawValue, !refreshed {
                    refreshed = true
                    try await refreshObliviousKeys(origin: origin)
                    continue
                }
                return outer
            }
            let inner = try BinaryHTTPMessage(decoding: try encapsulated.openResponse(raw.body))
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
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/signet/v1/ohttp-keys")
        head.headers.add(name: "Host", value: origin.authority)
        let raw = try await execute(origin: origin, head: head, body: [])
        guard raw.head.status == .ok else {
            throw SignetError(.ohttpKeyUnknown, "the gateway answered \(raw.head.status.code) for its key configurations")
        }
        let keys = try OHTTPKeyConfiguration.decodeList(raw.body)
        guard !keys.isEmpty else { throw SignetError(.ohttpKeyUnknown, "the gateway lists no key configuration") }
        obliviousKeys = keys
    }

    private static func response(_ raw: HTTP1Connection.RawResponse) -> ClientResponse {
        var fields = MessageFields()
        for header in raw.head.headers { fields.append(name: header.name, value: header.value) }
        return ClientResponse(status: Int(raw.head.status.code), fields: fields, body: raw.body)
    }
}
