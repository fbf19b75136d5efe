// SPDX-License-Identifier: Apache-2.0

/// Where a token is cached: per gateway, bearer and DPoP-bound apart.
struct AppTokenSlot: Hashable {
    let origin: Origin
    let dpopBound: Bool
}
