// SPDX-License-Identifier: Apache-2.0
#if canImport(Security) && canImport(Darwin)
import Foundation
import Security
import SignetCore

/// A ``SecureValueStore`` in the app's Keychain: one generic-password item per name under
/// `service`, readable after the first unlock (requests are signed in the background too) and never
/// migrated to another device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`): an App Attest key
/// id restored onto another phone is `invalidKey` there.
///
/// - Note: Compiled only where `Security` exists (the shim); ``MemoryValueStore`` is what the
///   lifecycle's tests use on Linux. The item layout follows ``KeychainTrustDocumentStore``'s.
public struct KeychainValueStore: SecureValueStore {
    public let service: String
    /// A Keychain access group shared with an app extension; `nil` for the app's own.
    public let accessGroup: String?

    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private func query(_ name: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: name,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func value(for name: String) async throws -> Data? {
        var search = query(name)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw SignetError(.storeUnavailable, "the Keychain refused to read \(name) (OSStatus \(status))")
        }
        return data
    }

    public func set(_ value: Data?, for name: String) async throws {
        guard let value else {
            let status = SecItemDelete(query(name) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw SignetError(.storeUnavailable, "the Keychain refused to delete \(name) (OSStatus \(status))")
            }
            return
        }
        let attributes: [String: Any] = [
            kSecValueData as String: value,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query(name) as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query(name).merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw SignetError(.storeUnavailable, "the Keychain refused to store \(name) (OSStatus \(status))")
        }
    }
}
#endif
