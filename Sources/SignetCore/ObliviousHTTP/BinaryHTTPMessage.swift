// SPDX-License-Identifier: Apache-2.0

/// An HTTP request or response in Binary HTTP (RFC 9292): what Oblivious HTTP encrypts.
///
/// Decoding takes both framings (known-length and indeterminate-length), truncated empty sections
/// and padding; encoding writes the known-length form. Decoding is bounded by ``Limits`` and refuses
/// what could not be forwarded safely over HTTP/1.1: field names that are not tokens, values with
/// CR, LF or NUL, targets with spaces or control characters.
public struct BinaryHTTPMessage: Sendable, Equatable {
    public enum Head: Sendable, Equatable {
        case request(method: String, scheme: String, authority: String, path: String)
        case response(status: Int)
    }

    public struct Field: Sendable, Equatable {
        /// Lowercase, as in HTTP/2 and HTTP/3.
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name.lowercased()
            self.value = value
        }
    }

    /// A 1xx response before the final one.
    public struct InformationalResponse: Sendable, Equatable {
        public var status: Int
        public var fields: [Field]

        public init(status: Int, fields: [Field]) {
            self.status = status
            self.fields = fields
        }
    }

    /// How much a decoder accepts.
    public struct Limits: Sendable {
        /// Bytes of one field section (header or trailer), as HTTP/1.1 heads are bounded.
        public var maximumFieldSectionBytes: Int
        /// Field lines in the whole message.
        public var maximumFieldCount: Int
        /// Bytes of each of the method, scheme, authority and path.
        public var maximumControlDataBytes: Int
        /// Interim responses before the final one.
        public var maximumInformationalResponses: Int

        public init(
            maximumFieldSectionBytes: Int = 80 * 1024,
            maximumFieldCount: Int = 256,
            maximumControlDataBytes: Int = 8 * 1024,
            maximumInformationalResponses: Int = 8
        ) {
            self.maximumFieldSectionBytes = maximumFieldSectionBytes
            self.maximumFieldCount = maximumFieldCount
            self.maximumControlDataBytes = maximumControlDataBytes
            self.maximumInformationalResponses = maximumInformationalResponses
        }

        public static let standard = Limits()
    }

    public var head: Head
    public var informational: [InformationalResponse]
    public var fields: [Field]
    public var content: [UInt8]
    public var trailers: [Field]

    public init(
        head: Head,
        informational: [InformationalResponse] = [],
        fields: [Field] = [],
        content: [UInt8] = [],
        trailers: [Field] = []
    ) {
        self.head = head
        self.informational = informational
        self.fields = fields
        self.content = content
        self.trailers = trailers
    }

    public var isRequest: Bool {
        if case .request = head { true } else { false }
    }
}
