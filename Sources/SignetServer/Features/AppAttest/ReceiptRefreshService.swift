// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Logging
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetStore

/// Exchanges due App Attest receipts with Apple in the background, a bounded batch per tick, each
/// claimed in the store first so that several gateway instances exchange a receipt once.
///
/// A new receipt must verify (Apple's signer, this app, this device's key, at most five minutes
/// old) before it replaces the stored one and sets the device's risk metric; a `304` keeps the
/// receipt and schedules the next exchange; failures back off, honouring `Retry-After`.
public struct ReceiptRefreshService: Service {
    let store: any SignetStorage
    let exchange: AppleReceiptExchange
    let verifier: AppAttestReceiptVerifier
    let appIDs: Set<String>
    let schedule: ReceiptSchedule
    let interval: Duration
    let batchSize: Int
    let logger: Logger
    let clock: @Sendable () -> Date

    public init(
        store: any SignetStorage,
        exchange: AppleReceiptExchange,
        verifier: AppAttestReceiptVerifier,
        appIDs: Set<String>,
        schedule: ReceiptSchedule,
        interval: Duration,
        batchSize: Int,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.exchange = exchange
        self.verifier = verifier
        self.appIDs = appIDs
        self.schedule = schedule
        self.interval = interval
        self.batchSize = batchSize
        self.logger = logger
        self.clock = clock
    }

    public func run() async throws {
        await Periodic.run(every: interval, immediately: true) {
            do {
                _ = try await refreshDue()
            } catch {
                logger.warning("receipt refresh failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One tick: at most `batchSize` due receipts, one after another (the rate bound).
    /// Returns how many were renewed.
    @discardableResult
    public func refreshDue() async throws -> Int {
        var renewed = 0
        for due in try await store.receiptsDue(at: clock(), limit: batchSize) {
            let now = clock()
            let lease = now.addingTimeInterval(schedule.lease)
            guard try await store.claimReceiptRefresh(deviceID: due.deviceID, dueAt: due.refreshAt, leaseUntil: lease)
            else { continue }
            if try await refresh(due, leasedUntil: lease, now: now) { renewed += 1 }
        }
        return renewed
    }

    private func refresh(_ due: ReceiptRecord, leasedUntil lease: Date, now: Date) async throws -> Bool {
        guard let device = try await store.device(id: due.deviceID) else { return false }
        let development = device.attributes["environment"] == "development"
        switch await exchange.exchange(due.receipt, development: development, now: now) {
        case .renewed(let bytes):
            do {
                let receipt = try await verify(bytes, of: device, now: now)
                try await store.saveReceipt(
                    ReceiptRecord(
                        deviceID: due.deviceID,
                        receipt: bytes,
                        kind: receipt.kind.rawValue,
                        createdAt: receipt.createdAt,
                        notBefore: receipt.notBefore,
                        expiresAt: receipt.expiresAt,
                        riskMetric: receipt.riskMetric,
                        refreshAt: schedule.next(expiresAt: receipt.expiresAt, notBefore: receipt.notBefore, now: now)
                    )
                )
                logger.debug(
                    "receipt renewed",
                    metadata: ["device": "\(due.deviceID)", "risk_metric": "\(receipt.riskMetric.map(String.init) ?? "-")"]
                )
                return true
            } catch {
                try await fail(due, "the new receipt does not verify: \(error)", retryAfter: nil, lease: lease, now: now)
                return false
            }
        case .unchanged:
            var kept = due
            // Not before Apple's "not before", and not again at once.
            let earliest = max(due.notBefore ?? now, now.addingTimeInterval(schedule.initialBackoff))
            kept.refreshAt = schedule.next(expiresAt: due.expiresAt, notBefore: earliest, now: now)
            kept.failures = 0
            kept.lastError = nil
            try await store.saveReceipt(kept)
            return false
        case .failed(let status, let reason, let retryAfter):
            logger.info(
                "receipt exchange failed",
                metadata: ["device": "\(due.deviceID)", "status": "\(status.map(String.init) ?? "-")", "reason": "\(reason)"]
            )
            try await fail(due, reason, retryAfter: retryAfter, lease: lease, now: now)
            return false
        }
    }

    private func verify(_ bytes: [UInt8], of device: DeviceRecord, now: Date) async throws -> AppAttestReceipt {
        guard let key = try device.keyRecord().key.p256PublicKey else {
            throw SignetError(.invalidKey, "the device's key is not P-256")
        }
        let point = Array(key.x963Representation)
        let receipt = try await verifier.verify(
            bytes,
            at: now,
            expecting: .init(appIDs: appIDs, publicKey: point, maximumAge: 300)
        )
        guard receipt.kind == .receipt else {
            throw SignetError(.receiptInvalid, "an exchange answers a RECEIPT, not \(receipt.kind.rawValue)")
        }
        return receipt
    }

    private func fail(_ due: ReceiptRecord, _ reason: String, retryAfter: TimeInterval?, lease: Date, now: Date)
        async throws
    {
        try await store.recordReceiptFailure(
            deviceID: due.deviceID,
            error: String(reason.prefix(500)),
            retryAt: schedule.retry(after: due.failures, retryAfter: retryAfter, now: now),
            leasedUntil: lease
        )
    }
}
