import Foundation
import NotifyRuntime

/// CPU time (user + system) of the local stack's processes, read before and after a measured phase so a report says
/// where the CPU went per unit of work: each service (its pid file), RabbitMQ (the node's VM and its children),
/// PostgreSQL (the postmaster and its backends, those that exited included; on a Patroni cluster each member's, and its
/// Patroni, etcd and HAProxy), and loadgen itself. Beside it, each
/// process's context switches (its threads' voluntary and involuntary ones; a PostgreSQL backend that exited takes its
/// own along): the times a thread of it went to sleep or was put aside. Each costs CPU of its own, about 20 µs of it on
/// the 2-vCPU virtual machine of BENCHMARKS.md (`loadgen wakeup`; docs/benchmarks-history.md, "2026-11-25, 90b04ab").
enum ProcessCPU {
    /// CPU milliseconds and context switches by process name at one moment.
    struct Snapshot: Sendable {
        let taken: ContinuousClock.Instant
        let milliseconds: [String: Double]
        let contextSwitches: [String: Double]
        /// The pid each process had, to tell a process started since an earlier snapshot.
        let pids: [String: Int]
    }

    /// One process's share of a measured phase.
    struct Share: Codable, Sendable {
        let process: String
        let cpuMilliseconds: Double
        /// CPU microseconds per unit of work (per push, notification or job, as the report says).
        let microsecondsPerUnit: Double
        /// Context switches of its threads over the phase, per unit (nil in reports written before they were counted).
        var contextSwitchesPerUnit: Double?
    }

    /// The processes' CPU over a phase, per unit of work.
    struct Usage: Codable, Sendable {
        /// What one unit is ("push", "notification", "push job").
        let unit: String
        let units: Int
        let seconds: Double
        let shares: [Share]

        var totalMicrosecondsPerUnit: Double { shares.reduce(0) { $0 + $1.microsecondsPerUnit } }
        /// Cores kept busy on average over the phase.
        var coresBusy: Double { shares.reduce(0) { $0 + $1.cpuMilliseconds } / 1000 / max(seconds, 0.001) }

        /// Markdown rows: one per process (busiest first), then the total.
        var rows: [(String, String)] {
            var rows = shares.sorted { $0.cpuMilliseconds > $1.cpuMilliseconds }.map { share in
                (
                    "CPU per \(unit): \(share.process)",
                    String(format: "%.1f µs (%.0f ms); %.1f context switches", share.microsecondsPerUnit, share.cpuMilliseconds, share.contextSwitchesPerUnit ?? 0)
                )
            }
            let switches = shares.reduce(0) { $0 + ($1.contextSwitchesPerUnit ?? 0) }
            rows.append(("CPU per \(unit): all processes", String(
                format: "%.1f µs; %.2f cores busy over %.1f s; %.1f context switches", totalMicrosecondsPerUnit, coresBusy, seconds, switches)))
            return rows
        }
    }

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Reads every process of the stack in `stack`'s state directory.
    static func snapshot(of stack: StackStateOption) -> Snapshot {
        var milliseconds: [String: Double] = [:]
        var switches: [String: Double] = [:]
        var pids: [String: Int] = [:]
        for (name, pid) in stack.services {
            if let pid, let used = cpuMilliseconds(pid) {
                milliseconds[name] = used
                switches[name] = contextSwitches(pid)
                pids[name] = pid
            }
        }
        let children = childrenByParent()
        for (process, pidFile, withChildren) in servers(in: stack.stateDir) {
            guard let pid = StackStateOption.pid(inFile: pidFile), let own = cpuMilliseconds(pid, withExitedChildren: withChildren) else { continue }
            let processes = [pid] + (withChildren ? children[pid] ?? [] : [])
            milliseconds[process] = own + processes.dropFirst().compactMap { cpuMilliseconds($0) }.reduce(0, +)
            switches[process] = processes.map(contextSwitches).reduce(0, +)
            pids[process] = pid
        }
        let own = Int(getpid())
        milliseconds["loadgen"] = cpuMilliseconds(own)
        switches["loadgen"] = contextSwitches(own)
        pids["loadgen"] = own
        return Snapshot(taken: .now, milliseconds: milliseconds, contextSwitches: switches, pids: pids)
    }

    /// The servers of a stack by name, pid file and whether their children count with them: RabbitMQ and PostgreSQL
    /// (postgres.sh's, or patroni-cluster.sh's members with their Patroni, etcd and HAProxy).
    private static func servers(in stateDir: String) -> [(String, String, Bool)] {
        var servers = [("rabbitmq", "\(stateDir)/rabbitmq/rabbitmq.pid", true), ("postgres", "\(stateDir)/postgres/data/postmaster.pid", true)]
        let cluster = "\(stateDir)/patroni-cluster"
        for member in 1...3 {
            servers += [
                ("postgres-\(member)", "\(cluster)/pg\(member)/data/postmaster.pid", true),
                // Patroni started its member's postmaster, counted above: its own CPU only.
                ("patroni-\(member)", "\(cluster)/pg\(member)/patroni.pid", false),
                ("etcd-\(member)", "\(cluster)/etcd\(member)/etcd.pid", false),
            ]
        }
        servers.append(("haproxy", "\(cluster)/haproxy/haproxy.pid", true))
        return servers
    }

    /// What each process used between `start` and `end`, per unit. A process started in between (not running at
    /// `start`, or under another pid) counts with all its CPU; processes gone by `end` are left out.
    static func usage(from start: Snapshot, to end: Snapshot, units: Int, unit: String) -> Usage {
        let seconds = (end.taken - start.taken).inSeconds
        let shares = end.milliseconds.compactMap { process, after -> Share? in
            let startedSince = start.pids[process] != end.pids[process]
            let used = startedSince ? after : max(after - (start.milliseconds[process] ?? 0), 0)
            let switchesAfter = end.contextSwitches[process] ?? 0
            let switched = startedSince ? switchesAfter : max(switchesAfter - (start.contextSwitches[process] ?? 0), 0)
            return Share(
                process: process, cpuMilliseconds: used, microsecondsPerUnit: used * 1000 / Double(max(units, 1)),
                contextSwitchesPerUnit: switched / Double(max(units, 1)))
        }
        return Usage(unit: unit, units: units, seconds: seconds, shares: shares.sorted { $0.process < $1.process })
    }

    /// The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and parentheses.
    private static func statFields(_ pid: Int) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }

    /// utime + stime (fields 14 and 15 of /proc/<pid>/stat) in milliseconds; `withExitedChildren` adds cutime + cstime
    /// (16 and 17), the CPU of the children it has reaped. A parent counted that way plus its live children stays
    /// continuous when a child exits between two snapshots (a PostgreSQL backend whose connection closed).
    private static func cpuMilliseconds(_ pid: Int, withExitedChildren: Bool = false) -> Double? {
        guard let fields = statFields(pid), fields.count > 14 else { return nil }
        let counted = withExitedChildren ? fields[11...14] : fields[11...12]
        return counted.compactMap { Double($0) }.reduce(0, +) * 1000 / ticksPerSecond
    }

    /// Voluntary and involuntary context switches of every live thread of `pid` (/proc/<pid>/task/*/status).
    private static func contextSwitches(_ pid: Int) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let values = ProcStatus.values(atPath: "/proc/\(pid)/task/\(task)/status", named: switchFields) ?? [:]
            return total + Double(values.values.reduce(0, +))
        }
    }

    private static let switchFields: Set<String> = ["voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"]

    /// Live processes by parent pid (field 4 of /proc/<pid>/stat).
    private static func childrenByParent() -> [Int: [Int]] {
        var children: [Int: [Int]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int(entry), let fields = statFields(pid), fields.count > 1, let parent = Int(fields[1]) else { continue }
            children[parent, default: []].append(pid)
        }
        return children
    }
}
