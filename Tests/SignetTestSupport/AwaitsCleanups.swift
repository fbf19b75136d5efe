// SPDX-License-Identifier: Apache-2.0
import Synchronization
import Testing

/// Clean-ups that a test registers with ``Cleanup/after(_:)``, awaited when the test ends — also when
/// it throws — last registered first.
///
/// A `defer { Task { await server.stop() } }` returns before the server stops, so the next test can
/// start while the previous one's servers, stores and files are still going away. Suites that start
/// servers carry the ``Testing/Trait/awaitsCleanups`` trait instead, and each test says
/// `Cleanup.after { await server.stop() }`.
public final class Cleanups: Sendable {
    @TaskLocal static var current: Cleanups?

    private let actions = Mutex<[@Sendable () async throws -> Void]>([])

    func append(_ action: @escaping @Sendable () async throws -> Void) {
        actions.withLock { $0.append(action) }
    }

    func run() async {
        while let action = actions.withLock({ $0.popLast() }) {
            do { try await action() } catch { Issue.record(error, "a clean-up failed") }
        }
    }
}

public enum Cleanup {
    /// Runs `action` when the current test ends, and waits for it before the test counts as done; an
    /// error it throws is recorded as an issue of the test.
    public static func after(_ action: @escaping @Sendable () async throws -> Void) {
        guard let scope = Cleanups.current else {
            Issue.record("Cleanup.after outside a test with the .awaitsCleanups trait: the clean-up is not awaited")
            Task { try await action() }
            return
        }
        scope.append(action)
    }
}

/// Gives each test its own ``Cleanups`` scope and awaits it when the test ends.
public struct AwaitsCleanups: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let scope = Cleanups()
        do {
            try await Cleanups.$current.withValue(scope) { try await function() }
        } catch {
            await scope.run()
            throw error
        }
        await scope.run()
    }
}

extension Trait where Self == AwaitsCleanups {
    /// Each test in the suite awaits the clean-ups it registered with ``Cleanup/after(_:)``.
    public static var awaitsCleanups: Self { AwaitsCleanups() }
}
