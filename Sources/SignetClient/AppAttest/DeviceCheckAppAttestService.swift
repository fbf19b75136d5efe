// SPDX-License-Identifier: Apache-2.0
#if canImport(DeviceCheck)
import DeviceCheck
import Foundation

/// The shim over Apple's `DCAppAttestService` (compiled only where DeviceCheck exists): every call
/// as it is, `DCError` mapped to ``AppAttestServiceError``. All the logic is in
/// ``AppAttestLifecycle``, which builds and is tested everywhere.
@available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, *)
public struct DeviceCheckAppAttestService: AppAttestService {
    public init() {}

    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    public func generateKey() async throws -> String {
        try await mapped { try await DCAppAttestService.shared.generateKey() }
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await mapped { try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash) }
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await mapped { try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash) }
    }

    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DCError {
            switch error.code {
            case .featureUnsupported: throw AppAttestServiceError(.unsupported, "\(error)")
            case .invalidKey: throw AppAttestServiceError(.invalidKey, "\(error)")
            case .invalidInput: throw AppAttestServiceError(.invalidInput, "\(error)")
            case .serverUnavailable: throw AppAttestServiceError(.serverUnavailable, "\(error)")
            default: throw AppAttestServiceError(.systemFailure, "\(error)")
            }
        }
    }
}
#endif
