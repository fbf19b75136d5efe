// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

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

    /// The reason code of a refusal in Signet's shape: an `application/problem+json` answer whose
    /// `reason` is a catalogued code answered with this status. What the client acts on (retries,
    /// registering again); any other body's `reason` is the upstream's business.
    public var gatewayRefusal: SignetError.Code? {
        guard status >= 400, fields["content-type"]?.lowercased().hasPrefix("application/problem+json") == true,
            let code = reason.flatMap(SignetError.Code.init(rawValue:)), code.httpStatus == status
        else { return nil }
        return code
    }

    /// The body as a JSON object, if it is one.
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}
