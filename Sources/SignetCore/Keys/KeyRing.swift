// SPDX-License-Identifier: Apache-2.0
import Foundation

/// An in-memory set of keys, several per key id, each with its own validity.
///
/// Rotation keeps the key id and overlaps validity: add the new key with a `notBefore`, give the old
/// one a `notAfter` a little later; during the overlap a signature from either verifies.
public struct KeyRing: KeyResolver, Sendable {
    private var byKeyID: [String: [KeyRecord]] = [:]

    public init(_ records: [KeyRecord] = []) {
        for record in records { add(record) }
    }

    public mutating func add(_ record: KeyRecord) {
        byKeyID[record.keyID, default: []].append(record)
    }

    /// Marks every record of `keyID` revoked; returns how many there were.
    @discardableResult
    public mutating func revoke(keyID: String) -> Int {
        guard var records = byKeyID[keyID] else { return 0 }
        for index in records.indices { records[index].revoked = true }
        byKeyID[keyID] = records
        return records.count
    }

    public var keyIDs: [String] { byKeyID.keys.sorted() }

    nonisolated(nonsending) public func records(for keyID: String) async throws -> [KeyRecord] {
        byKeyID[keyID] ?? []
    }

    /// The records of `keyID` usable at `time`, or the precise reason there are none.
    ///
    /// - Throws: `unknown_key`, `key_revoked`, `key_expired` or `key_not_yet_valid`.
    public static func usable(_ records: [KeyRecord], keyID: String, at time: Date) throws -> [KeyRecord] {
        guard !records.isEmpty else {
            throw SignetError(.unknownKey, "no key is registered as \(keyID.debugDescription)")
        }
        // Nearly always every record is usable: hand the array back rather than copy each record.
        // (Through a buffer: an array's subscript copies the whole record.)
        if records.withUnsafeBufferPointer({ buffer in buffer.indices.allSatisfy { buffer[$0].isUsable(at: time) } }) {
            return records
        }
        let usable = records.filter { $0.isUsable(at: time) }
        if !usable.isEmpty { return usable }
        if records.contains(where: \.revoked) {
            throw SignetError(.keyRevoked, "key \(keyID.debugDescription) is revoked")
        }
        if records.contains(where: { $0.notAfter.map { $0 < time } ?? false }) {
            throw SignetError(.keyExpired, "key \(keyID.debugDescription) is past its validity")
        }
        throw SignetError(.keyNotYetValid, "key \(keyID.debugDescription) is not valid yet")
    }
}
