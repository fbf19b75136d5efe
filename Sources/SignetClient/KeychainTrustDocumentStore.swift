// SPDX-License-Identifier: Apache-2.0
#if canImport(Security) && canImport(Darwin)
import Foundation
import Security
import SignetCore

/// A ``TrustDocumentStore`` in the app's Keychain: one generic-password item, readable after the
/// first unlock (updates are fetched in the background too) and never migrated to another device
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`); on macOS in the data-protection Keychain,
/// as on iOS. Should the Keychain refuse to store it, the client still applies the document and says
/// why in `SignetClient/trustStoreFailure`.
///
/// ```swift
/// configuration.trustUpdates = TrustUpdates(
///     trustKeys: ["trust-2026": trustKeyPEM],
///     compiledDocument: compiledJWS,
///     store: KeychainTrustDocumentStore(service: "com.example.app.signet-trust"))
/// ```
///
/// - Note: Compiled only where `Security` exists. Signet's tests run on Linux, where this type is
///   not built; ``FileTrustDocumentStore`` is the tested store.
public struct KeychainTrustDocumentStore: TrustDocumentStore {
    public let service: String
    public let account: String
    /// A Keychain access group shared with an app extension; `nil` for the app's own.
    public let accessGroup: String?
    /// The data-protection Keychain (always so on iOS). On macOS it needs the app's
    /// application-identifier or keychain-access-groups entitlement; a tool without one passes
    /// `false` for the file-based login Keychain.
    public let dataProtectionKeychain: Bool

    public init(service: String, account: String = "trust.jws", accessGroup: String? = nil, dataProtectionKeychain: Bool = true) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.dataProtectionKeychain = dataProtectionKeychain
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: dataProtectionKeychain,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func load() throws -> String? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else {
            throw SignetError(.trustDocumentInvalid, "the Keychain refused to read the trust document (OSStatus \(status))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// One item updated in place (the Keychain applies an update atomically), added the first time.
    public func save(_ document: String) throws {
        let attributes: [String: Any] = [
            kSecValueData as String: Data(document.utf8),
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw SignetError(.trustDocumentInvalid, "the Keychain refused to store the trust document (OSStatus \(status))")
        }
    }
}
#endif
