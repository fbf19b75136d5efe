// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "signet",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "SignetCore", targets: ["SignetCore"]),
        .executable(name: "signet", targets: ["SignetCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Pure: no I/O, no clock. RFC 9421, RFC 9530, keys, policies, pins, seed-compatible MACs.
        .target(
            name: "SignetCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SignetCLI",
            dependencies: [
                "SignetCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignetCoreTests",
            dependencies: ["SignetCore"],
            swiftSettings: strict
        ),
        // Runs the built `signet` binary and the Python interop peer as separate processes.
        .testTarget(
            name: "SignetCLITests",
            dependencies: ["SignetCore", "SignetCLI"],
            exclude: [],
            swiftSettings: strict
        ),
    ]
)
