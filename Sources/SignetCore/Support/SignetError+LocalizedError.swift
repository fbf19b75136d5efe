// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What an app shows or logs from `error.localizedDescription`: the reason, then the code to branch
/// on and to search the docs for — rather than Foundation's "The operation couldn't be completed".
extension SignetError: LocalizedError {
    public var errorDescription: String? { "\(reason) (\(code.rawValue))" }
    public var failureReason: String? { code.rawValue }
}
