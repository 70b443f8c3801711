
#if canImport(Glibc)
import ArgumentParser
import Foundation
import Glibc
import NotifyRuntime
#endif

/// `loadgen wakeup`: the CPU that waking a sleeping thread costs on this machine, on the thread's own CPU and on the
/// other one. Every hop of the pipeline (a request handed from an event loop to a task, a publish to the AMQP
/// thread, a message to the next process) wakes a thread; at a moderate rate most of them find it asleep.
struct WakeupBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wakeup",
        abstract: "Time the CPU one thread waking another costs here: on the same CPU and on another, back to back and after a pause.",
        discussion: """
            Two threads pass a byte back and forth over a pair of pipes, each blocked in read() until the other \
            writes: every round trip wakes a sleeping thread twice. The threads are pinned to the same CPU or to two \
            different ones. In the cases "after a pause" the first thread sleeps --pause-microseconds before each round \
            trip, so the CPUs go idle between wake-ups as they do at a moderate request rate; "pause alone" is that \
            sleep without a round trip, to subtract. CPU is this process's user + system time (getrusage) per round \
            trip. Nothing else of the stack needs to run; run it on a quiet machine.
            """
    )

    @Option(help: "Round trips per case (at most 1,000,000).")
    var roundTrips = 20_000
    @Option(help: "Microseconds the first thread sleeps before each round trip in the cases after a pause (at most 100,000).")
    var pauseMicroseconds = 1_000
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/wakeup-<time>)")
    var output: String?

    func validate() throws {
        guard (1...1_000_000).contains(roundTrips) else { throw ValidationError("--round-trips must be between 1 and 1,000,000.") }
        guard (1...100_000).contains(pauseMicroseconds) else { throw ValidationError("--pause-microseconds must be between 1 and 100,000.") }
    }

    func run() async throws {
        let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        guard await PingPong.canPin(to: 0) else { throw ValidationError("cannot keep a thread on CPU 0 (sched_setaffinity failed)") }
        let twoCPUs = processors > 1 ? await PingPong.canPin(to: 1) : false
        // Round trips after a pause take at least the pause each: fewer of them keep the run short.
        let pausedTrips = max(1, min(roundTrips, 5_000_000 / pauseMicroseconds))
        var cases: [PingPong] = [
            PingPong(name: "same CPU, back to back", cpus: (0, 0), pauseMicroseconds: 0, roundTrips: roundTrips),
            PingPong(name: "same CPU, after a pause", cpus: (0, 0), pauseMicroseconds: pauseMicroseconds, roundTrips: pausedTrips),
        ]
        if twoCPUs {
            cases += [
                PingPong(name: "other CPU, back to back", cpus: (0, 1), pauseMicroseconds: 0, roundTrips: roundTrips),
                PingPong(name: "other CPU, after a pause", cpus: (0, 1), pauseMicroseconds: pauseMicroseconds, roundTrips: pausedTrips),
            ]
        }
        cases.append(PingPong(name: "pause alone", cpus: (0, 0), pauseMicroseconds: pauseMicroseconds, roundTrips: pausedTrips, pauseOnly: true))
        var figures: [BenchmarkReport.Figure] = []
        for pingPong in cases {
            let measured = try await pingPong.run()
            let what = pingPong.pauseOnly ? "pause" : "round trip"
            print("loadgen wakeup: \(pingPong.name): \(String(format: "%.1f", measured.cpuMicroseconds)) µs CPU, \(String(format: "%.1f", measured.wallMicroseconds)) µs wall per \(what)")
            figures.append(.init(name: "\(pingPong.name): CPU per \(pingPong.pauseOnly ? "pause" : "round trip (two wake-ups)")", value: measured.cpuMicroseconds, unit: "µs"))
            figures.append(.init(name: "\(pingPong.name): wall time per \(what)", value: measured.wallMicroseconds, unit: "µs"))
        }
        let report = BenchmarkReport(
            mode: "wakeup", date: Date(),
            settings: ["roundTrips": "\(roundTrips)", "pausedRoundTrips": "\(pausedTrips)", "pauseMicroseconds": "\(pauseMicroseconds)", "processors": "\(processors)"],
            figures: figures, cpu: nil)
        try report.write(to: output ?? BenchmarkReport.defaultOutput("wakeup"))
    }
}

/// One case of `loadgen wakeup`: two pinned threads passing a byte back and forth.
private struct PingPong: Sendable {
    struct Measured {
        var cpuMicroseconds: Double
        var wallMicroseconds: Double
    }

    var name: String
    /// The CPUs of the first thread (which times) and the second (which answers).
    var cpus: (Int, Int)
    var pauseMicroseconds: Int
    var roundTrips: Int
    /// Only the first thread's pauses, no round trips: the cost to subtract from the cases after a pause.
    var pauseOnly = false

    func run() async throws -> Measured {
        var toAnswerer: [Int32] = [0, 0], toTimer: [Int32] = [0, 0]
        guard pipe(&toAnswerer) == 0, pipe(&toTimer) == 0 else { throw ValidationError("pipe() failed: errno \(errno)") }
        defer { for descriptor in toAnswerer + toTimer { close(descriptor) } }
        let (answererIn, answererOut, timerIn, timerOut) = (toAnswerer[0], toTimer[1], toTimer[0], toAnswerer[1])
        let (trips, pause, pauseOnly, cpus) = (roundTrips, pauseMicroseconds, pauseOnly, cpus)
        if !pauseOnly {
            Thread {
                Self.pin(to: cpus.1)
                var byte: UInt8 = 0
                for _ in 0..<trips {
                    guard read(answererIn, &byte, 1) == 1, write(answererOut, &byte, 1) == 1 else { return }
                }
            }.start()
        }
        return await withCheckedContinuation { continuation in
            Thread {
                Self.pin(to: cpus.0)
                var byte: UInt8 = 1
                var pauseSpec = timespec(tv_sec: 0, tv_nsec: pause * 1000)
                let cpuBefore = Self.processCPUMicroseconds()
                let started = ContinuousClock.now
                for _ in 0..<trips {
                    if pause > 0 { nanosleep(&pauseSpec, nil) }
                    if pauseOnly { continue }
                    guard write(timerOut, &byte, 1) == 1, read(timerIn, &byte, 1) == 1 else { break }
                }
                let wall = (ContinuousClock.now - started).inSeconds * 1e6
                let cpu = Self.processCPUMicroseconds() - cpuBefore
                continuation.resume(returning: Measured(cpuMicroseconds: cpu / Double(trips), wallMicroseconds: wall / Double(trips)))
            }.start()
        }
    }

    /// glibc's sched_setaffinity, looked up at run time: Swift's Glibc module leaves out the GNU extensions.
    private typealias SetAffinity = @convention(c) (pid_t, Int, UnsafePointer<cpu_set_t>) -> Int32
    private static let setAffinity: SetAffinity? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity").map {
        unsafeBitCast($0, to: SetAffinity.self)
    }

    /// Whether a thread may be kept on `cpu` (it exists and this process's CPU set allows it); tried on a thread of its own.
    static func canPin(to cpu: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: pin(to: cpu)) }.start()
        }
    }

    /// Keeps the calling thread on one CPU; false when the system refused.
    @discardableResult
    private static func pin(to cpu: Int) -> Bool {
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { bytes in bytes[cpu / 8] |= UInt8(1 << (cpu % 8)) }
        return setAffinity?(0, MemoryLayout<cpu_set_t>.size, &set) == 0
    }

    /// User + system CPU of this process so far.
    private static func processCPUMicroseconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}
