// SPDX-License-Identifier: Apache-2.0

/// The signature base of RFC 9421 §2.5: one line per covered component, then `@signature-params`.
public struct SignatureBase: Sendable, Hashable {
    /// The base as text (lines joined by LF, no trailing newline).
    public let text: String

    /// Builds the base for `parameters` over `message`.
    ///
    /// - Parameters:
    ///   - message: The message being signed or verified.
    ///   - parameters: The covered components and metadata; a received member's raw text is used as is.
    ///   - relatedRequest: For a response, the request it answers (needed by `;req` components).
    public init(message: HTTPMessage, parameters: SignatureParameters, relatedRequest: HTTPMessage? = nil) throws {
        let resolver = ComponentResolver(message: message, relatedRequest: relatedRequest)
        var text = ""
        for component in parameters.components {
            let identifier = component.description
            for value in try resolver.values(for: component) {
                // §2.5 step 2.4: a value must not contain a newline (it would forge extra lines).
                guard !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
                    throw SignetError(.malformedHeader, "\(identifier) has a newline in its value")
                }
                text.append(identifier)
                text.append(": ")
                text.append(value)
                text.append("\n")
            }
        }
        text += "\"@signature-params\": " + (try parameters.serialized)
        self.text = text
    }

    public var bytes: [UInt8] { Array(text.utf8) }
}
