// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

// A Hummingbird app that protects one route group with Signet's verification middleware, and depends
// on the middleware product alone. CI builds it and checks that no database driver, HTTP client or
// Prometheus is in its build (scripts/check-embedding.sh).
let package = Package(
    name: "EmbeddedMiddleware",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "signet", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "EmbeddedMiddleware",
            dependencies: [
                .product(name: "SignetMiddleware", package: "signet"),
                .product(name: "SignetCore", package: "signet"),
                .product(name: "SignetStore", package: "signet"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        )
    ]
)
