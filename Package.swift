// swift-tools-version:6.2
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Where the client can carry requests over its own SwiftNIO connections: everywhere but the
/// phone-class Apple platforms, which send through URLSession (`#if os(macOS) || !canImport(Darwin)`
/// in the sources). macOS keeps it for the `signet` tool, tests and server-side developers.
let nioTransportPlatforms: [Platform] = [.linux, .android, .windows, .openbsd, .wasi, .macOS]

let package = Package(
    name: "signet",
    // The server modules use `Synchronization.Mutex` (macOS 15). The modules an app links
    // (SignetCore, SignetTrust, SignetClient, SignetAppAttest, SignetAndroid, SignetSimulator) run from iOS 17:
    // swift-crypto's HPKE (Oblivious HTTP) is CryptoKit's there, which is iOS 17; jwt-kit asks 15,
    // App Attest 14. They use no newer API (scripts/check-client-platforms.sh).
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .library(name: "SignetCore", targets: ["SignetCore"]),
        .library(name: "SignetAppAttest", targets: ["SignetAppAttest"]),
        .library(name: "SignetAndroid", targets: ["SignetAndroid"]),
        .library(name: "SignetSimulator", targets: ["SignetSimulator"]),
        .library(name: "SignetStore", targets: ["SignetStore"]),
        .library(name: "SignetSQLite", targets: ["SignetSQLite"]),
        .library(name: "SignetPostgres", targets: ["SignetPostgres"]),
        .library(name: "SignetMiddleware", targets: ["SignetMiddleware"]),
        .library(name: "SignetServer", targets: ["SignetServer"]),
        .library(name: "SignetClient", targets: ["SignetClient"]),
        .library(name: "SignetTrust", targets: ["SignetTrust"]),
        .executable(name: "signet", targets: ["SignetCLI"]),
        .executable(name: "signet-bench", targets: ["SignetBench"]),
        .executable(name: "signet-fuzz", targets: ["SignetFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Envoy's ext_authz over gRPC (the authorization listener's `grpc`): the server, its HTTP/2
        // transport on SwiftNIO, and the Protocol Buffers runtime of the committed generated code.
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        // Compact JWS for signed trust documents (ES256, EdDSA), the JOSE library of the Swift server world.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        // The operator console's server-rendered HTML (escaped by default); no dependencies of its own.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // `swift package generate-documentation`: the DocC catalogues, checked in CI without warnings.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Property tests (tests only): invariants checked over generated inputs, with shrinking.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
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
        // App Attest: bounded CBOR, authenticator data, attestation and assertion verifiers, the
        // `apple-app-attest` RFC 9421 algorithm.
        .target(
            name: "SignetAppAttest",
            dependencies: [
                "SignetCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        // Android Key Attestation: the KeyDescription record, the chain to Google's roots, the
        // revocation list, the policy.
        .target(
            name: "SignetAndroid",
            dependencies: [
                "SignetCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        // Software App Attest and Android Key Attestation devices and their development CAs, for
        // tests and the demo.
        .target(
            name: "SignetSimulator",
            dependencies: [
                "SignetCore", "SignetAppAttest", "SignetAndroid", "SignetClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        // Challenges, devices, nonces: the store protocols and the memory store. No database.
        .target(
            name: "SignetStore",
            dependencies: ["SignetCore"],
            swiftSettings: strict
        ),
        // The embedded default store: one SQLite file, nonce claims group-committed.
        .target(
            name: "SignetSQLite",
            dependencies: [
                "SignetCore", "SignetStore",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The store for several gateway instances: PostgreSQL.
        .target(
            name: "SignetPostgres",
            dependencies: [
                "SignetCore", "SignetStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // What a Hummingbird app embeds: the verification middleware and its context, problem+json
        // rendering, key resolution from a store, the registration routes (App Attest and Android
        // Key Attestation included, hence SignetAppAttest and SignetAndroid: pure verification, no
        // I/O), app tokens (JWTs by jwt-kit). No database driver, no HTTP client, no Prometheus.
        .target(
            name: "SignetMiddleware",
            dependencies: [
                "SignetCore", "SignetStore", "SignetAppAttest", "SignetAndroid",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: strict
        ),
        // Signed trust documents: pin sets (and keys) an app updates without a release; JOSE by jwt-kit.
        .target(
            name: "SignetTrust",
            dependencies: [
                "SignetCore",
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: strict
        ),
        // The client SDK: pinned TLS (swift-certificates Verifier, then pin sets) over SwiftNIO, configured
        // origins only, request signing, registration, signed responses, pin reports; URLSession on Apple,
        // with SwiftNIO not linked there.
        .target(
            name: "SignetClient",
            dependencies: [
                "SignetCore",
                "SignetTrust",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                // The transport where URLSession cannot apply the client's trust; on Apple
                // platforms the client sends through URLSession and links no SwiftNIO.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: nioTransportPlatforms)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: nioTransportPlatforms)),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: nioTransportPlatforms)),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(platforms: nioTransportPlatforms)),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: nioTransportPlatforms)),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Apple's privacy manifest: what the client sends, for the app's privacy report.
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: strict
        ),
        // The gateway: reverse proxy, route table, configuration, TLS and device CA, registration
        // routes, Prometheus metrics; opens the configured store's driver.
        .target(
            name: "SignetServer",
            dependencies: [
                "SignetCore",
                "SignetStore",
                "SignetSQLite",
                "SignetPostgres",
                "SignetMiddleware",
                "SignetAppAttest",
                "SignetAndroid",
                "SignetTrust",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                // HTTP/2 on the apps' listener, negotiated by ALPN (NIOTLS).
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                // The gRPC listener's certificate, renewed on reload as the HTTP listeners' is.
                .product(name: "NIOCertificateReloading", package: "swift-nio-extras"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // The published contract, compiled into the binary: served at /signet/v1/openapi.json.
            resources: [.embedInCode("Contract/openapi.json")],
            swiftSettings: strict
        ),
        // The seeds' high-score service: an upstream that knows nothing of Signet, for the demo and tests.
        .target(
            name: "ExampleScores",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SignetCLI",
            dependencies: [
                "SignetAndroid",
                "SignetCore",
                "SignetServer",
                "SignetMiddleware",
                "SignetStore",
                "SignetAppAttest",
                "SignetSimulator",
                "SignetClient",
                "SignetTrust",
                "ExampleScores",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // Benchmarks and fuzzers: not part of the shipped command.
        .executableTarget(
            name: "SignetBench",
            dependencies: [
                "SignetCore", "SignetServer", "SignetMiddleware", "SignetStore", "SignetAppAttest", "SignetSimulator", "SignetClient",
                "ExampleScores", "SignetSQLite", "SignetPostgres", "SignetAndroid",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // One fuzz target per parser of untrusted bytes, each with the property its inputs must hold
        // and seeds from the test vectors; replayed by the tests, fuzzed by scripts/fuzz.sh.
        .target(
            name: "SignetFuzzTargets",
            dependencies: [
                "SignetCore", "SignetAppAttest", "SignetAndroid", "SignetSimulator", "SignetTrust", "SignetMiddleware", "SignetServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // libFuzzer's driver, declared (CLibFuzzer.h); defined only in a -sanitize=fuzzer link.
        .target(name: "CLibFuzzer"),
        // `signet-fuzz`: replays and seeds corpora; built with -sanitize=fuzzer, the fuzzer itself.
        .executableTarget(
            name: "SignetFuzz",
            dependencies: ["SignetFuzzTargets", "CLibFuzzer"],
            swiftSettings: strict
        ),
        // What the test targets share: the awaited clean-up scope, the one harness that starts the
        // example backend and gateways (plain or TLS) and stops them, the `signet` and Python runners.
        .target(
            name: "SignetTestSupport",
            dependencies: [
                "SignetCore", "SignetStore", "SignetMiddleware", "SignetServer", "SignetSimulator", "ExampleScores",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/SignetTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignetCoreTests",
            dependencies: [
                "SignetCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignetAndroidTests",
            dependencies: [
                "SignetAndroid", "SignetCore", "SignetSimulator", "SignetTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignetAppAttestTests",
            dependencies: [
                "SignetCore", "SignetAppAttest", "SignetSimulator", "SignetTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignetStoreTests",
            dependencies: [
                "SignetCore", "SignetStore", "SignetSQLite", "SignetPostgres", "SignetTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        // The gateway over real HTTP on loopback: SQLite, PostgreSQL with two instances, the CLI.
        .testTarget(
            name: "SignetServerTests",
            dependencies: [
                "SignetCore", "SignetStore", "SignetPostgres", "SignetMiddleware", "SignetServer", "ExampleScores",
                "SignetSimulator", "SignetAppAttest", "SignetAndroid", "SignetTestSupport", "SignetTrust",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // Gateway decisions through its router, no socket (GatewayRouterTests).
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // The middleware and registration routes in a plain Hummingbird app, memory store, real HTTP.
        .testTarget(
            name: "SignetMiddlewareTests",
            dependencies: [
                "SignetCore", "SignetStore", "SignetMiddleware",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Trust documents: JWS both ways against PyJWT, every refusal.
        .testTarget(
            name: "SignetTrustTests",
            dependencies: [
                "SignetCore", "SignetTrust", "SignetTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // The client SDK against real TLS servers and the gateway on loopback.
        .testTarget(
            name: "SignetClientTests",
            dependencies: [
                "SignetCore", "SignetClient", "SignetMiddleware", "SignetServer", "SignetStore", "SignetSimulator",
                "ExampleScores", "SignetTestSupport", "SignetTrust",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Every fuzz target's committed corpus (Fuzz/corpus) holds its property.
        .testTarget(
            name: "SignetFuzzTests",
            dependencies: ["SignetFuzzTargets"],
            swiftSettings: strict
        ),
        // Runs the built `signet` binary and the Python interop peer as separate processes.
        .testTarget(
            name: "SignetCLITests",
            dependencies: [
                "SignetCore", "SignetCLI", "SignetTestSupport", "SignetAppAttest",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: [],
            swiftSettings: strict
        ),
    ]
)
