// SPDX-License-Identifier: Apache-2.0
import NIOCore

/// A deadline on a channel's event loop that moves and clears without cancelling anything: what a
/// per-request timer costs when it is set at every request and lifted at its end.
///
/// Why not `scheduleTask` and `cancel()` per request: NIO keeps a loop's scheduled tasks in a heap
/// and finds a cancelled one by a linear search under a lock (`Heap.remove(value:)`), so each
/// cancel walks every timer of the loop — one per open connection at least. Two cancels a request
/// (its body's deadline, its upstream exchange) cost a verified request about 3 µs on one core at
/// 64 connections, and grow with the connections held. Here at most one task is scheduled: setting
/// a later deadline or clearing it is a store, and the task, when it fires, calls `onExpiry` if the
/// deadline has passed and waits for it otherwise. Only moving a deadline earlier than the task
/// cancels it (a reader that stalled and came back, not the common path).
///
/// Used on its loop only.
final class LoopDeadline {
    private let eventLoop: any EventLoop
    private var onExpiry: (() -> Void)?
    /// When `onExpiry` is owed; `nil` when nothing is.
    private(set) var deadline: NIODeadline?
    /// The one scheduled task, when it fires, and its number (a cancelled task that was already
    /// due in the loop's tick still runs: it finds another number and does nothing).
    private var scheduled: (at: NIODeadline, task: Scheduled<Void>, number: Int)?
    private var scheduledCount = 0

    /// - Parameter onExpiry: Called on the loop once a set deadline passes; the deadline is cleared
    ///   first, so it may set another. Held until ``stop()``.
    init(on eventLoop: any EventLoop, onExpiry: @escaping () -> Void) {
        self.eventLoop = eventLoop
        self.onExpiry = onExpiry
    }

    /// Owes `onExpiry` once `delay` has passed (by the loop's clock), replacing any deadline set
    /// before.
    func set(in delay: TimeAmount) {
        guard onExpiry != nil else { return }
        let deadline = eventLoop.now + delay
        self.deadline = deadline
        if let scheduled {
            guard deadline < scheduled.at else { return }  // it fires first, and waits on
            scheduled.task.cancel()
        }
        schedule(at: deadline)
    }

    /// Owes nothing; a task scheduled fires once more and does nothing.
    func clear() {
        deadline = nil
    }

    /// Owes nothing, ever: the task is cancelled and `onExpiry` released (what it holds, the
    /// handler and its context, with it). For `handlerRemoved`.
    func stop() {
        deadline = nil
        onExpiry = nil
        scheduled?.task.cancel()
        scheduled = nil
    }

    private func schedule(at time: NIODeadline) {
        scheduledCount &+= 1
        let number = scheduledCount
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let task = eventLoop.scheduleTask(deadline: time) { bound.value.fired(number) }
        scheduled = (time, task, number)
    }

    private func fired(_ number: Int) {
        guard scheduled?.number == number else { return }
        scheduled = nil
        guard let deadline else { return }
        guard eventLoop.now >= deadline else { return schedule(at: deadline) }
        self.deadline = nil
        onExpiry?()
    }
}
