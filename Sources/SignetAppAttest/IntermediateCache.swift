// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Intermediates validated against the verifier's roots (bounded: Apple has a handful).
final class IntermediateCache: Sendable {
    private let validated = Locked<Set<Certificate>>([])

    func contains(_ certificate: Certificate) -> Bool { validated.withLock { $0.contains(certificate) } }

    func insert(_ certificate: Certificate) {
        validated.withLock { set in
            if set.count >= 64 { set.removeAll() }
            set.insert(certificate)
        }
    }
}
