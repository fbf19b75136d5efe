// SPDX-License-Identifier: Apache-2.0

/// The signature base of RFC 9421 §2.5: one line per covered component, then `@signature-params`.
public struct SignatureBase: Sendable, Hashable {
    /// The base as the algorithm signs it: UTF-8, lines joined by LF, no trailing newline.
    public let bytes: [UInt8]

    /// The base as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Builds the base for `parameters` over `message`.
    ///
    /// - Parameters:
    ///   - message: The message being signed or verified.
    ///   - parameters: The covered components and metadata; a received member's raw text is used as is.
    ///   - relatedRequest: For a response, the request it answers (needed by `;req` components).
    public init(message: HTTPMessage, parameters: SignatureParameters, relatedRequest: HTTPMessage? = nil) throws {
        let resolver = ComponentResolver(message: message, relatedRequest: relatedRequest)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        for component in parameters.components {
            for value in try resolver.values(for: component) {
                // §2.5 step 2.4: a value must not contain a newline (it would forge extra lines).
                guard !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
                    throw SignetError(.malformedHeader, "\(component.description) has a newline in its value")
                }
                bytes += component.description.utf8
                bytes += [UInt8(ascii: ":"), UInt8(ascii: " ")]
                bytes += value.utf8
                bytes.append(0x0A)
            }
        }
        bytes += "\"@signature-params\": ".utf8
        bytes += try parameters.serialized.utf8
        self.bytes = bytes
    }
}
