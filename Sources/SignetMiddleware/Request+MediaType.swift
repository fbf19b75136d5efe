// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore

extension Request {
    /// The media type `Content-Type` declares, lowercased, its parameters (such as `charset`) aside;
    /// `nil` without exactly one `Content-Type`.
    package var mediaType: String? {
        let values = headers[values: .contentType]
        guard values.count == 1 else { return nil }
        return String(values[0].prefix { $0 != ";" }).trimmingOWS.lowercased()
    }

    /// Refuses a body not declared `application/json` with `unsupported_media_type` (415). Read as
    /// JSON anyway, a body sent as something else would be taken for what its sender did not say: a
    /// form, or text a browser posts cross-site unasked.
    ///
    /// - Parameter what: What the body is, for the error's text.
    package func requireJSONContent(_ what: String) throws {
        guard mediaType == "application/json" else {
            throw SignetError(.unsupportedMediaType, "\(what) is sent as Content-Type: application/json")
        }
    }
}
