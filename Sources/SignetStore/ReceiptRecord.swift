// SPDX-License-Identifier: Apache-2.0
import Foundation

/// An attested device's latest App Attest receipt and when to exchange it next.
public struct ReceiptRecord: Sendable, Hashable {
    public var deviceID: String
    /// The receipt as Apple sent it (BER CMS), for the next exchange.
    public var receipt: [UInt8]
    /// `ATTEST` (from the attestation) or `RECEIPT` (from an exchange).
    public var kind: String
    public var createdAt: Date
    public var notBefore: Date?
    public var expiresAt: Date
    /// Apple's risk metric; nil until a first exchange.
    public var riskMetric: Int?
    /// When the refresher should exchange it next.
    public var refreshAt: Date
    /// Failed exchanges since the last success (the backoff exponent).
    public var failures: Int
    /// The last exchange's failure, for operators.
    public var lastError: String?

    public init(
        deviceID: String,
        receipt: [UInt8],
        kind: String,
        createdAt: Date,
        notBefore: Date? = nil,
        expiresAt: Date,
        riskMetric: Int? = nil,
        refreshAt: Date,
        failures: Int = 0,
        lastError: String? = nil
    ) {
        self.deviceID = deviceID
        self.receipt = receipt
        self.kind = kind
        self.createdAt = createdAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.riskMetric = riskMetric
        self.refreshAt = refreshAt
        self.failures = failures
        self.lastError = lastError
    }
}
