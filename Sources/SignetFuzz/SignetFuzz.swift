// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetFuzzTargets

#if SIGNET_LIBFUZZER
import CLibFuzzer

/// Built with `-sanitize=fuzzer` (scripts/fuzz.sh): libFuzzer drives the target named by
/// `SIGNET_FUZZ_TARGET`, its command line passed through.
@main
struct SignetFuzz {
    static func main() {
        guard let name = ProcessInfo.processInfo.environment["SIGNET_FUZZ_TARGET"], let target = FuzzTarget.named(name) else {
            FileHandle.standardError.write(Data("set SIGNET_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: " "))\n".utf8))
            exit(2)
        }
        selected = target
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))
    }
}

nonisolated(unsafe) private var selected: FuzzTarget?

/// One input: a broken property stops the run, and libFuzzer saves the input that broke it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try selected?.run(input)
    } catch {
        fatalError("\(selected?.name ?? "?"): \(error)")
    }
    return 0
}

#else

/// Without libFuzzer: lists the targets, replays inputs through one (a corpus, a crash libFuzzer
/// saved), and writes the seed corpora from the test vectors.
@main
struct SignetFuzz {
    static let usage = """
        usage: signet-fuzz list
               signet-fuzz replay TARGET PATH...      run each file (or each file of each folder) through TARGET
               signet-fuzz seed VECTORS CORPUS        write each target's seeds to CORPUS/TARGET/
        Fuzzing itself: scripts/fuzz.sh (a -sanitize=fuzzer build of this command).
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch (arguments.first, arguments.count) {
        case ("list", 1):
            for target in FuzzTarget.all { print("\(target.name)\t\(target.property)") }
        case ("replay", 3...):
            guard let target = FuzzTarget.named(arguments[1]) else { fail("no target \(arguments[1].debugDescription)") }
            var count = 0
            for file in arguments.dropFirst(2).flatMap(files(at:)) {
                guard let input = FileManager.default.contents(atPath: file) else { fail("cannot read \(file)") }
                do { try target.run(Array(input)) } catch { fail("\(file): \(error)") }
                count += 1
            }
            print("\(target.name): \(count) inputs, the property held for each")
        case ("seed", 3):
            let vectors = URL(fileURLWithPath: arguments[1])
            for target in FuzzTarget.all {
                let folder = URL(fileURLWithPath: arguments[2]).appendingPathComponent(target.name)
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let seeds = try target.seeds(vectors: vectors)
                    for seed in seeds {
                        try Data(seed).write(to: folder.appendingPathComponent(FuzzTarget.seedName(seed)))
                    }
                    print("\(target.name): \(seeds.count) seeds")
                } catch {
                    fail("\(target.name): \(error)")
                }
            }
        default:
            fail(usage)
        }
    }

    static func files(at path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("no file \(path)") }
        guard isFolder.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}

#endif
