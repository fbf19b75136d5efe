// SPDX-License-Identifier: Apache-2.0

/// Reads the shape nearly every signed request carries — one signature — without building a
/// structured-field tree: `label=("c1" "c2");created=1;keyid="k";nonce="n"` in `Signature-Input`
/// and `label=:base64:` in `Signature`.
///
/// A fast path, not a second parser: it accepts a strict subset of what ``StructuredFieldParser``
/// accepts (components without parameters, parameter values that are integers or strings without
/// escapes, no dictionary member parameters on the signature) and yields the same
/// ``SignatureFields/Entry`` the general path would. Anything else — several members, unusual
/// spacing, any doubt — answers `nil`, and the general parser decides, with its error messages.
/// Differential tests hold the two together.
package struct SingleSignatureScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package static func entry(input: String, signature: String, limits: SignatureFields.Limits = .standard) -> SignatureFields.Entry? {
        var input = input
        var signature = signature
        return input.withUTF8 { inputBytes in
            var scanner = SingleSignatureScanner(inputBytes)
            guard let (label, parameters) = scanner.signatureInput(limits: limits) else { return nil }
            return signature.withUTF8 { signatureBytes in
                var scanner = SingleSignatureScanner(signatureBytes)
                guard let bytes = scanner.signature(label: label) else { return nil }
                return SignatureFields.Entry(label: label, parameters: parameters, signature: bytes)
            }
        }
    }

    // MARK: The two fields

    private mutating func signatureInput(limits: SignatureFields.Limits) -> (String, SignatureParameters)? {
        skipSpaces()
        guard let label = key(), take(UInt8(ascii: "=")) else { return nil }
        let rawStart = index
        guard take(UInt8(ascii: "(")) else { return nil }
        var components: [ComponentIdentifier] = []
        components.reserveCapacity(8)
        while true {
            skipSpaces()
            if take(UInt8(ascii: ")")) { break }
            guard let name = string(), !name.isEmpty,
                !name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A })
            else { return nil }
            let component = ComponentIdentifier(lowercaseName: name)
            // Past the limit, or covered twice: the general path refuses it, with its reason. The
            // search is linear in a list the limit keeps short.
            guard components.count < limits.components, !components.contains(component) else { return nil }
            components.append(component)
            guard peek == UInt8(ascii: " ") || peek == UInt8(ascii: ")") else { return nil }
        }
        var parameters = SignatureParameters(components: components)
        var count = 0
        while take(UInt8(ascii: ";")) {
            count += 1
            guard count <= limits.parameters else { return nil }  // the general path refuses it
            skipSpaces()
            guard let name = key(), take(UInt8(ascii: "=")) else { return nil }
            switch (name, peek) {
            case ("created", _), ("expires", _):
                guard let value = integer() else { return nil }
                if name == "created" { parameters.created = value } else { parameters.expires = value }
            case ("nonce", UInt8(ascii: "\"")):
                guard let value = string() else { return nil }
                parameters.nonce = value
            case ("alg", UInt8(ascii: "\"")):
                guard let value = string() else { return nil }
                parameters.algorithm = value
            case ("keyid", UInt8(ascii: "\"")):
                guard let value = string() else { return nil }
                parameters.keyID = value
            case ("tag", UInt8(ascii: "\"")):
                guard let value = string() else { return nil }
                parameters.tag = value
            default:
                return nil  // an unknown parameter or a type the general path should judge
            }
        }
        parameters.rawValue = String(decoding: UnsafeBufferPointer(rebasing: bytes[rawStart..<index]), as: UTF8.self)
        guard atEndAfterOWS() else { return nil }
        return (label, parameters)
    }

    private mutating func signature(label: String) -> [UInt8]? {
        skipSpaces()
        guard key() == label, take(UInt8(ascii: "=")), take(UInt8(ascii: ":")) else { return nil }
        let start = index
        while let c = peek, c != UInt8(ascii: ":") { index += 1 }
        guard take(UInt8(ascii: ":")), atEndAfterOWS() else { return nil }
        // The decoder refuses any byte outside the alphabet, as the general parser does.
        return Base64.decode(UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]), lenient: true)
    }

    // MARK: Pieces

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpaces() {
        while peek == UInt8(ascii: " ") { index += 1 }
    }

    private mutating func atEndAfterOWS() -> Bool {
        while peek == UInt8(ascii: " ") || peek == UInt8(ascii: "\t") { index += 1 }
        return index == bytes.count
    }

    private mutating func key() -> String? {
        guard let first = peek, first.isLowercaseAlpha || first == UInt8(ascii: "*") else { return nil }
        let start = index
        while let c = peek, c.isKeyCharacter { index += 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// A string without escapes; `nil` for anything else (escapes go to the general parser).
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let c = peek, c >= 0x20, c <= 0x7E, c != UInt8(ascii: "\\") {
            index += 1
            if c == UInt8(ascii: "\"") {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]), as: UTF8.self)
            }
        }
        return nil
    }

    /// A non-negative integer of at most 15 digits, not followed by `.` (a decimal).
    private mutating func integer() -> Int64? {
        var value: Int64 = 0
        var digits = 0
        while let c = peek, c.isDigit {
            digits += 1
            guard digits <= 15 else { return nil }
            value = value * 10 + Int64(c - UInt8(ascii: "0"))
            index += 1
        }
        guard digits > 0, peek != UInt8(ascii: ".") else { return nil }
        return value
    }
}
