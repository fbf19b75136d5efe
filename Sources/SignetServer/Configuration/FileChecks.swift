// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The files a configuration reads and creates, checked before anything is opened or written
/// (``GatewayConfiguration/checkFiles()``): the core's and each feature's
/// (``GatewayFeature/checkFiles(_:_:)``), every problem collected, none fixed.
struct FileChecks {
    private(set) var problems: [String] = []

    /// A file the gateway reads.
    mutating func mustRead(_ path: String, _ name: String) {
        if !FileManager.default.isReadableFile(atPath: path) { problems.append("cannot read \(name) \(path)") }
    }

    /// A file the gateway reads, or creates on first start.
    mutating func mayCreate(_ path: String, _ name: String) {
        if FileManager.default.fileExists(atPath: path) {
            mustRead(path, name)
            return
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.isWritableFile(atPath: folder) {
            problems.append("cannot create \(name) \(path): the folder \(folder) is not writable or does not exist")
        }
    }

    /// Two files made together (a certificate and its key): both there, or both creatable.
    mutating func pair(_ certificate: String, _ key: String, _ name: String, create: Bool) {
        let present = [certificate, key].filter { FileManager.default.fileExists(atPath: $0) }
        if present.count == 1 {
            problems.append("\(name): \(present[0]) exists without its pair; give both files or neither")
        } else if present.isEmpty && create {
            mayCreate(certificate, "\(name).certificateFile")
            mayCreate(key, "\(name).keyFile")
        } else {
            let readable = problems.count
            mustRead(certificate, "\(name).certificateFile")
            mustRead(key, "\(name).keyFile")
            guard problems.count == readable else { return }
            do {
                _ = try GatewayTLS.read(certificateFile: certificate, keyFile: key, named: name)
            } catch let error as ConfigurationError {
                problems.append(error.message)
            } catch {
                problems.append("\(name): \(error)")
            }
        }
    }
}
