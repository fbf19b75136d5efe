// SPDX-License-Identifier: Apache-2.0

/// What RFC 9421 reads of an HTTP message — its control data, its field lines by name, its body
/// bytes — without owning a copy of them.
///
/// ``HTTPMessage`` is one; a server provides another over its own request (SignetMiddleware's
/// `ServerMessage` over Hummingbird's `HTTPFields` and `ByteBuffer`), so the verifier and the
/// signer read what the server already holds instead of a rebuilt message with a copied body.
///
/// Field names are compared ASCII case-insensitively, and lines keep their received order and
/// multiplicity (RFC 9421 combines repeated fields in order; `;bs` even encodes each line).
public protocol HTTPMessageView: Sendable {
    /// The request's method and target, or the response's status.
    var head: HTTPMessage.Head { get }

    /// Every line's value for `name`, in order; empty when the field is absent.
    func fieldValues(_ name: String) -> [String]

    /// Appends the RFC 9110 §5.3 combination of `name`'s lines (OWS trimmed, joined by `, `) to
    /// `bytes`; `false` when the field is absent. The signature base is written with this.
    func appendCombinedField(_ name: String, to bytes: inout [UInt8]) -> Bool

    /// The RFC 9110 §5.3 combination of `name`'s lines with OWS trimmed; `nil` when absent. A
    /// requirement, with a default built on ``fieldValues(_:)``, so a message that can answer
    /// without an array of lines (the server's) does so when the verifier reads its fields.
    func combinedField(_ name: String) -> String?

    /// The number of content bytes.
    var bodyByteCount: Int { get }

    /// Lends the content bytes as transferred (after any Content-Encoding).
    func withBodyBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

extension HTTPMessageView {
    /// The RFC 9110 §5.3 combination of `name`'s lines with OWS trimmed; `nil` when absent.
    public func combinedField(_ name: String) -> String? {
        let lines = fieldValues(name)
        guard !lines.isEmpty else { return nil }
        return lines.count == 1 ? lines[0].trimmingOWS : lines.map(\.trimmingOWS).joined(separator: ", ")
    }

    public func containsField(_ name: String) -> Bool { !fieldValues(name).isEmpty }

    public var isRequest: Bool {
        if case .request = head { return true }
        return false
    }

    public var requestMethod: String? {
        if case .request(let method, _) = head { return method }
        return nil
    }

    public var requestTarget: RequestTarget? {
        if case .request(_, let target) = head { return target }
        return nil
    }
}

extension HTTPMessage: HTTPMessageView {
    public func fieldValues(_ name: String) -> [String] { fields.values(name) }

    public func appendCombinedField(_ name: String, to bytes: inout [UInt8]) -> Bool {
        fields.appendCombined(name, to: &bytes)
    }

    public func combinedField(_ name: String) -> String? { fields[name] }

    public var bodyByteCount: Int { body.count }

    public func withBodyBytes<Result>(_ use: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body.withUnsafeBytes(use)
    }
}

/// A message seen with one more field line at its end: the `Content-Digest` a signer adds before it
/// builds the base, without copying the message to add it.
struct MessageAddingField<Base: HTTPMessageView>: HTTPMessageView {
    let base: Base
    let name: String
    let value: String

    var head: HTTPMessage.Head { base.head }
    var bodyByteCount: Int { base.bodyByteCount }

    func fieldValues(_ wanted: String) -> [String] {
        var values = base.fieldValues(wanted)
        if MessageFields.sameName(name, wanted) { values.append(value) }
        return values
    }

    func appendCombinedField(_ wanted: String, to bytes: inout [UInt8]) -> Bool {
        let found = base.appendCombinedField(wanted, to: &bytes)
        guard MessageFields.sameName(name, wanted) else { return found }
        if found { bytes += ", ".utf8 }
        bytes += value.trimmingOWS.utf8
        return true
    }

    func withBodyBytes<Result>(_ use: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try base.withBodyBytes(use)
    }
}
