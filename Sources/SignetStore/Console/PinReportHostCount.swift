// SPDX-License-Identifier: Apache-2.0

/// How many kept pin reports name one host.
public struct PinReportHostCount: Sendable, Hashable {
    public var hostname: String
    public var count: Int

    public init(hostname: String, count: Int) {
        self.hostname = hostname
        self.count = count
    }
}
