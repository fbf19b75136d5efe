// SPDX-License-Identifier: Apache-2.0
import SignetCore
import X509

/// The development roots of Signet's simulator (`signet simulator-ca`, `SignetSimulator`), whose
/// keys sit with the debug builds and test machines that attest under them: trusted only where the
/// configuration says `development`, so that a production gateway never takes them unnoticed.
enum SimulatorRoots {
    /// Whether `certificate` is one of the simulator's roots: subject `O=Signet`, `CN=Signet Simulator …`.
    static func contains(_ certificate: Certificate) -> Bool {
        var organization: String?
        var commonName: String?
        for relativeName in certificate.subject {
            for attribute in relativeName {
                switch attribute.type {
                case .RDNAttributeType.organizationName: organization = attribute.value.description
                case .RDNAttributeType.commonName: commonName = attribute.value.description
                default: break
                }
            }
        }
        return organization == "Signet" && commonName?.hasPrefix("Signet Simulator") == true
    }

    /// Refuses `roots`, read from the file at `path`, when one is the simulator's and
    /// `development` is off.
    static func check(_ roots: [Certificate], at path: String, development: Bool) throws {
        guard !development, let root = roots.first(where: contains) else { return }
        throw ConfigurationError.invalid(
            path,
            "\(path) holds \(root.subject), a development root of Signet's simulator, whose keys sit with debug builds: "
                + "attestations under it prove nothing. Set development: true to take it (never in production)"
        )
    }
}
