// SPDX-License-Identifier: Apache-2.0

/// One named step of a check that reports every step, passed or not (App Attest and Android
/// attestations, Play Integrity tokens: what `signet inspect` prints).
public struct InspectionStep: Sendable {
    public var name: String
    /// `nil` when the step passed.
    public var error: SignetError?

    public init(name: String, error: SignetError?) {
        self.name = name
        self.error = error
    }
}

extension InspectionStep {
    /// Runs `body` as the step `name`: passed, or with its refusal. An error that is not a
    /// ``SignetError`` becomes `fallback`, with its description. (A value, not a mutation of the
    /// report: a step's body often records what it read in the same report.)
    package static func run(_ name: String, refusing fallback: SignetError.Code, _ body: () throws -> Void) -> InspectionStep {
        do {
            try body()
            return InspectionStep(name: name, error: nil)
        } catch let error as SignetError {
            return InspectionStep(name: name, error: error)
        } catch {
            return InspectionStep(name: name, error: SignetError(fallback, "\(error)"))
        }
    }
}

extension Array where Element == InspectionStep {
    /// The first refusal, if any step refused.
    public var firstRefusal: SignetError? { lazy.compactMap(\.error).first }
}
