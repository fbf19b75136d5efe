// SPDX-License-Identifier: Apache-2.0
import Crypto

/// An HMAC-SHA256 secret with its padded key blocks computed once.
///
/// HMAC (RFC 2104) is `H((K ^ opad) || H((K ^ ipad) || message))`. swift-crypto's `HMAC` keeps two
/// running hash states and copies both (two allocations each) for every message; for the short
/// signature bases Signet authenticates that copying costs more than the hashing. Keeping the two
/// 64-byte padded keys and hashing each buffer in one shot does the same computation in half the
/// time. `authenticationCode(for:)` is checked against swift-crypto's `HMAC` and RFC 4231's vectors.
///
/// A class: a key record is copied on its way through a verification, and one reference is
/// cheaper to copy than the three this holds.
final class SharedSecret: Sendable {
    let key: SymmetricKey
    private let innerPad: [UInt8]
    private let outerPad: [UInt8]

    private static let blockSize = 64

    init(_ key: SymmetricKey) {
        self.key = key
        // RFC 2104 §2: a key longer than the block is hashed first; a shorter one is zero-padded.
        var block = key.withUnsafeBytes { Array($0) }
        if block.count > Self.blockSize { block = Array(SHA256.hash(data: block)) }
        block += [UInt8](repeating: 0, count: Self.blockSize - block.count)
        self.innerPad = block.map { $0 ^ 0x36 }
        self.outerPad = block.map { $0 ^ 0x5C }
    }

    func authenticationCode(for message: [UInt8]) -> [UInt8] {
        Array(digest(of: message))
    }

    /// Whether `code` is the authentication code of `message`, compared in constant time (and
    /// without building the code as an array).
    func authenticates(_ message: [UInt8], code: [UInt8]) -> Bool {
        digest(of: message).withUnsafeBytes { ConstantTime.equals(code, $0) }
    }

    private func digest(of message: [UInt8]) -> SHA256Digest {
        let inner = innerPad.withUnsafeBufferPointer { pad in
            message.withUnsafeBufferPointer { message in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pad.count + message.count) { buffer in
                    _ = buffer.initialize(fromContentsOf: pad)
                    _ = buffer[pad.count...].initialize(fromContentsOf: message)
                    return SHA256.hash(data: UnsafeRawBufferPointer(buffer))
                }
            }
        }
        return outerPad.withUnsafeBufferPointer { pad in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pad.count + SHA256.byteCount) { buffer in
                _ = buffer.initialize(fromContentsOf: pad)
                inner.withUnsafeBytes { _ = buffer[pad.count...].initialize(fromContentsOf: $0) }
                return SHA256.hash(data: UnsafeRawBufferPointer(buffer))
            }
        }
    }
}
