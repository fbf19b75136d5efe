// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore

extension Request {
    /// Refuses a body not declared `application/json` (its parameters, such as `charset`, aside) with
    /// `unsupported_media_type` (415). Read as JSON anyway, a body sent as something else would be
    /// taken for what its sender did not say: a form, or text a browser posts cross-site unasked.
    ///
    /// - Parameter what: What the body is, for the error's text.
    package func requireJSONContent(_ what: String) throws {
        let values = headers[values: .contentType]
        let mediaType = values.count == 1
            ? String(values[0].prefix { $0 != ";" }).trimmingOWS.lowercased() : nil
        guard mediaType == "application/json" else {
            throw SignetError(.unsupportedMediaType, "\(what) is sent as Content-Type: application/json")
        }
    }
}
