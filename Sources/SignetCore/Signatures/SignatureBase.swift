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
    public init(
        message: some HTTPMessageView,
        parameters: SignatureParameters,
        relatedRequest: (any HTTPMessageView)? = nil
    ) throws {
        let resolver = ComponentResolver(message: message, relatedRequest: relatedRequest)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        for component in parameters.components {
            try resolver.appendLines(for: component, to: &bytes)
        }
        bytes += "\"@signature-params\": ".utf8
        bytes += try parameters.serialized.utf8
        self.bytes = bytes
    }
}
