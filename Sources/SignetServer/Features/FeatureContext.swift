// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What a feature is built from: the shared collaborators, the features built before it (in
/// ``FeatureRegistry`` order), and at a reload the running gateway's, whose state it may carry on.
struct FeatureContext: Sendable {
    let dependencies: FeatureDependencies
    let built: [any GatewayFeature]
    let previous: [any GatewayFeature]
    /// The running gateway's configuration, at a reload.
    let previousConfiguration: GatewayConfiguration?

    var configuration: GatewayConfiguration { dependencies.configuration }

    /// A feature built before this one, when configured: the one typed way features depend on
    /// each other (registration on App Attest, Android, the device CA and passwords).
    func feature<Feature: GatewayFeature>(_ type: Feature.Type) -> Feature? {
        built.lazy.compactMap { $0 as? Feature }.first
    }

    /// Whether a key file at `path` may be created when it does not exist: at the first start, or at
    /// a reload for a path the running configuration does not name (`paths` lists a configuration's
    /// key files). A key the running gateway uses that vanished is refused, never made again: a new
    /// key under the same path would fail every token, certificate or client made with the old one.
    /// Paths are compared as files: standardised, symbolic links resolved (`a//b`, `./b` and a link
    /// to `b` are all `b`).
    func mayCreate(_ path: String, among paths: (GatewayConfiguration) -> [String]) -> Bool {
        guard let previousConfiguration else { return true }
        func file(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        return !paths(previousConfiguration).map(file).contains(file(path))
    }

    /// The running gateway's instance of this feature, at a reload.
    func previous<Feature: GatewayFeature>(_ type: Feature.Type) -> Feature? {
        previous.lazy.compactMap { $0 as? Feature }.first
    }
}
