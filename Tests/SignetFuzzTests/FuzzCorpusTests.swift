// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetFuzzTargets
import Testing

/// The fuzz targets' corpora (`Fuzz/corpus/<target>/`: the seeds from the test vectors, and every
/// input a fuzzing run found that broke a property, once fixed) replayed on every test run, so a
/// fixed parser stays fixed without libFuzzer.
@Suite struct FuzzCorpusTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let corpus = repository.appendingPathComponent("Fuzz/corpus")

    @Test(arguments: FuzzTarget.all.map(\.name))
    func corpusHoldsTheProperty(_ name: String) async throws {
        let target = try #require(FuzzTarget.named(name))
        let folder = Self.corpus.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(!files.isEmpty, "no corpus for \(name)")
        let inputs = try files.map { (file: $0, bytes: Array(try Data(contentsOf: folder.appendingPathComponent($0)))) }
        let failures = await Self.onAThreadOfItsOwn {
            inputs.compactMap { input -> String? in
                do { try target.run(input.bytes) } catch { return "\(name)/\(input.file): \(error)" }
                return nil
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// A target may wait for async work (`blocking`): never on the cooperative pool, whose threads
    /// that work needs.
    static func onAThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// The committed corpus starts from what the test vectors give today: a vector added or
    /// changed is a seed to commit (`signet-fuzz seed Tests/Vectors Fuzz/corpus`).
    @Test(arguments: FuzzTarget.all.map(\.name))
    func seedsAreCommitted(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let seeds = try target.seeds(vectors: Self.repository.appendingPathComponent("Tests/Vectors"))
        #expect(!seeds.isEmpty)
        let committed = Set(try FileManager.default.contentsOfDirectory(atPath: Self.corpus.appendingPathComponent(name).path))
        for seed in seeds {
            #expect(committed.contains(FuzzTarget.seedName(seed)), "\(name): a seed is not in Fuzz/corpus/\(name)")
        }
    }
}
