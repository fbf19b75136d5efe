// SPDX-License-Identifier: Apache-2.0

/// `signet --version` and `signet_build_info`: the release this source is, raised with every
/// release that changes what users see (the configuration, the wire, the CLI). Pre-1.0: any minor
/// release may change them.
public enum SignetVersion {
    public static let current = "0.9.0"
}
