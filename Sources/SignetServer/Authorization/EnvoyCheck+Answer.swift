// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware
import SwiftProtobuf

extension EnvoyCheck {
    /// The check's answer: `OkHttpResponse` with the identity fields that apply (overwriting the
    /// client's) and every other `Signet-*` field removed, or `DeniedHttpResponse` with the
    /// refusal's status, its problem+json body and the fields a client needs (`content-type`,
    /// `signet-reason`, `www-authenticate`, `retry-after`).
    static func answer(_ response: Response, body: ByteBuffer, sentNames: [String]) -> Envoy_Service_Auth_V3_CheckResponse {
        var answer = Envoy_Service_Auth_V3_CheckResponse()
        if response.status.code == 200 {
            var ok = Envoy_Service_Auth_V3_OkHttpResponse()
            var set: Set<String> = []
            for field in response.headers where ExternalAuthorization.identityNames.contains(field.name) && !field.value.isEmpty {
                ok.headers.append(.overwrite(field.name.canonicalName.lowercased(), field.value))
                set.insert(field.name.canonicalName.lowercased())
            }
            // What Signet's own proxy removes and Envoy would pass on: `Signet-*` spellings and
            // the fields that make a framework act on another method or URL than the one judged.
            let clients = sentNames.filter(ForwardedFields.misleadsUpstream)
            let unset = ExternalAuthorization.identityNames.map { $0.canonicalName.lowercased() } + clients
            ok.headersToRemove = Array(Set(unset).subtracting(set)).sorted()
            answer.okResponse = ok
            answer.status = .with { $0.code = 0 }
            return answer
        }
        var denied = Envoy_Service_Auth_V3_DeniedHttpResponse()
        denied.status = .with { $0.code = Envoy_Type_V3_StatusCode(rawValue: response.status.code) ?? .forbidden }
        for name: HTTPField.Name in [.contentType, .signetReason, .wwwAuthenticate, .retryAfter, DPoPVerifier.nonceField, SignetRequestVerifier.acceptSignatureField] {
            for value in response.headers[values: name] { denied.headers.append(.overwrite(name.canonicalName.lowercased(), value)) }
        }
        denied.body = String(buffer: body)
        answer.deniedResponse = denied
        // UNAUTHENTICATED for a 401, PERMISSION_DENIED otherwise: any code but OK denies.
        answer.status = .with { $0.code = response.status.code == 401 ? 16 : 7 }
        return answer
    }
}
extension Envoy_Config_Core_V3_HeaderValueOption {
    /// `name: value`, replacing the request's own lines of `name`.
    static func overwrite(_ name: String, _ value: String) -> Self {
        .with {
            $0.header = .with {
                $0.key = name
                $0.value = value
            }
            $0.appendAction = .overwriteIfExistsOrAdd
        }
    }
}
