import ArgumentParser
import Foundation
import GarageLite
import GarageLiteClient
import GarageLiteServer
import Histogram
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Issue 44's scale rows: a million objects to a fresh device, a thousand idle live connections,
// a hundred devices uploading at once.
#if canImport(Hummingbird)
extension Bench {
    /// What the million row measured.
    struct MillionResult {
        var objects: Int
        var seedingSeconds: Double
        var syncSeconds: Double
        var rssBeforeMB: Double
        var peakRSSMB: Double?
        var rate: Double { Double(objects) / syncSeconds }
    }

    /// A fresh device's first sync of `count` objects of its scopes, over HTTP from one instance:
    /// objects per second from the call of `engine.sync()` to its return, and the process's peak
    /// resident memory during that sync (server and device share the process). The server's
    /// store is filled first, untimed, through its own write path (`SyncServer.upload`, as a
    /// device's upload is answered: each change's state, feed entry and scope counter), in
    /// batches of `seedBatch` changes, by `seedTasks` uploads at once, each to a scope of its own
    /// (`team0`, `team1`, …; the device reads them all): uploads to one scope race on its counter.
    /// With `seededStore` (a SQLite file), the server's store is that file: seeded when it
    /// doesn't exist yet, and kept; used as it is when it does (its objects must be `count`).
    func million(_ count: Int, seedBatch: Int, seedTasks: Int, seededStore: String? = nil) async throws -> MillionResult {
        let reused = seededStore.map { FileManager.default.fileExists(atPath: $0) } ?? false
        let garage = try seededStore.map { try Garage(path: $0) } ?? serverStore().open()
        let scopes = (0..<seedTasks).map { "team\($0)" }
        let seeding = ContinuousClock.now
        let server = try Self.server(garage)
        if !reused { try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, scope) in scopes.enumerated() {
                let share = count / seedTasks + (index < count % seedTasks ? 1 : 0)
                group.addTask { try await seedQuickly(server, count: share, scope: scope, batch: seedBatch) }
            }
            try await group.waitForAll()
        } }
        let seedingSeconds = seconds(since: seeding)
        return try await withInstances(1, store: { garage }) { urls, _ in
            let (device, engine) = try device(urls[0], scopes: scopes)
            let before = Memory.kilobytes("VmRSS") ?? 0
            let resetPeak = Memory.resetPeak()
            let start = ContinuousClock.now
            try await syncAll(engine)
            let syncSeconds = seconds(since: start)
            let peak = resetPeak ? Memory.kilobytes("VmHWM") : nil
            let received = try await device.count(BenchNote.self)
            guard received == count else { throw ValidationError("the device holds \(received) notes of \(count)") }
            return MillionResult(objects: count, seedingSeconds: seedingSeconds, syncSeconds: syncSeconds,
                                 rssBeforeMB: Double(before) / 1024, peakRSSMB: peak.map { Double($0) / 1024 })
        }
    }

    /// Uploads `count` new notes of `scope` to `server`, in-process, `batch` changes an upload
    /// (one transaction each), one upload after the other.
    func seedQuickly(_ server: SyncServer, count: Int, scope: String, batch: Int) async throws {
        let access = SyncAccess(user: "seed", scopes: [scope])
        var next = 0
        while next < count {
            let end = min(count, next + batch)
            let changes = (next..<end).map { index in
                SyncChange(identifier: "\(scope)-\(index)", object: BenchNote(id: "\(scope)-\(index)", scope: scope, title: "n"), version: nil)
            }
            let results = try await server.upload(UploadBatch(typeName: "BenchNote", changes: changes), access: access)
            var accepted = 0
            for case .accepted in results.results.values { accepted += 1 }
            guard accepted == changes.count else { throw ValidationError("the seed's upload took \(accepted) of \(changes.count)") }
            next = end
        }
    }

    /// What the idle row measured.
    struct IdleResult {
        var connections: Int
        var listeners: Int
        var rssBeforeMB: Double
        var rssAfterMB: Double
        var kilobytesPerConnection: Double { (rssAfterMB - rssBeforeMB) * 1024 / Double(connections) }
    }

    /// `count` idle live connections to one instance (`GET /sync/live`, token `team`), each a
    /// plain POSIX socket that writes the request and reads until the server's first event
    /// (`: listening`, written once the connection is a listener): the process's resident memory
    /// before and after, and the instance's count of listeners. The clients cost a file
    /// descriptor and nothing kept in this process's memory, so the growth is the server's
    /// (its channels, the route's tasks and buffers). Ten connections opened first and
    /// kept open (the ten of them before and after) warm the server's pools.
    func idle(_ count: Int) async throws -> IdleResult {
        try Memory.raiseFileLimit(to: 2 * count + 256)
        let store = try serverStore()
        return try await withInstances(1, store: store.open) { urls, servers in
            let port = UInt16(urls[0].port ?? 0)
            let warm = try await LiveSockets.open(10, port: port, token: "team")
            defer { LiveSockets.close(warm) }
            try await Task.sleep(nanoseconds: 500_000_000)
            let before = Memory.kilobytes("VmRSS") ?? 0
            let listenersBefore = servers[0].listeners
            let sockets = try await LiveSockets.open(count, port: port, token: "team")
            defer { LiveSockets.close(sockets) }
            try await Task.sleep(nanoseconds: 500_000_000)
            let after = Memory.kilobytes("VmRSS") ?? 0
            let listeners = servers[0].listeners - listenersBefore
            return IdleResult(connections: count, listeners: listeners,
                              rssBeforeMB: Double(before) / 1024, rssAfterMB: Double(after) / 1024)
        }
    }

    /// What the devices row measured.
    struct DevicesResult {
        var devices: Int
        var objects: Int
        var requests: Int
        var seconds: Double
        var p50: Double
        var p99: Double
        var max: Double
        var rate: Double { Double(objects) / seconds }
    }

    /// `devices` devices uploading at once to one instance for `duration` seconds, each in a
    /// scope (and as a user) of its own, each with an `HTTPSyncTransport` of its own (its own
    /// URLSession and connections) that posts what an engine's upload posts: batches of 50 new
    /// notes with their change identifiers, the next as soon as the last is answered (no
    /// device-side store: the process's 2 cores go to the server); with `pace`, a device sends
    /// its next batch `pace` seconds after its last one was sent (at once when that is past).
    /// Objects per second accepted, and p50/p99 of each upload's answer time as the device sees
    /// it, from its request to the decoded answer (HdrHistogram).
    func devices(_ devices: Int, duration: Double, pace: Double?, batch: Int = 50) async throws -> DevicesResult {
        let store = try serverStore()
        return try await withInstances(1, store: store.open) { urls, _ in
            let transports = (0..<devices).map { index in HTTPSyncTransport(servers: [urls[0]]) { "device\(index)" } }
            let start = ContinuousClock.now
            let deadline = start + .milliseconds(Int(duration * 1_000))
            let perDevice = try await withThrowingTaskGroup(of: (Int, [UInt64]).self) { group in
                for (index, transport) in transports.enumerated() {
                    group.addTask {
                        var accepted = 0
                        var times: [UInt64] = []
                        var revision: Int64 = 0
                        while ContinuousClock.now < deadline {
                            let changes = (0..<batch).map { _ in
                                revision += 1
                                let id = "device\(index)-\(revision)"
                                return SyncChange(identifier: id, object: BenchNote(id: id, scope: "device\(index)", title: "note \(revision)"),
                                                  version: nil, changeID: SyncChangeID(device: "device\(index)", revision: revision))
                            }
                            let sent = ContinuousClock.now
                            let results = try await transport.upload(UploadBatch(typeName: "BenchNote", changes: changes))
                            times.append(UInt64(seconds(since: sent) * 1_000_000))
                            for case .accepted in results.results.values { accepted += 1 }
                            if let pace {
                                let next = min(deadline, sent + .milliseconds(Int(pace * 1_000)))
                                if next > ContinuousClock.now { try await Task.sleep(until: next, clock: .continuous) }
                            }
                        }
                        return (accepted, times)
                    }
                }
                return try await group.reduce(into: [(Int, [UInt64])]()) { $0.append($1) }
            }
            let elapsed = seconds(since: start)
            var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000)
            for (_, times) in perDevice { for time in times { _ = histogram.record(time) } }
            let objects = perDevice.reduce(0) { $0 + $1.0 }
            let requests = perDevice.reduce(0) { $0 + $1.1.count }
            guard objects == requests * batch else { throw ValidationError("\(requests * batch - objects) of \(requests * batch) changes not accepted") }
            return DevicesResult(devices: devices, objects: objects, requests: requests, seconds: elapsed,
                                 p50: Double(histogram.valueAtPercentile(50)) / 1_000,
                                 p99: Double(histogram.valueAtPercentile(99)) / 1_000,
                                 max: Double(histogram.max) / 1_000)
        }
    }
}
#endif

/// The process's memory and file limit, from /proc and setrlimit (Linux).
enum Memory {
    /// A line of /proc/self/status (`VmRSS`, `VmHWM`), in kilobytes; `nil` where there is none.
    static func kilobytes(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Resets the process's peak resident memory (`VmHWM`) to its current one: "5" written to
    /// /proc/self/clear_refs. False where that can't be done.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// Raises the soft limit of open files to at least `count` (within the hard limit).
    static func raiseFileLimit(to count: Int) throws {
        #if canImport(Glibc)
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < rlim_t(count) else { return }
        guard limit.rlim_max >= rlim_t(count) else {
            throw ValidationError("\(count) files needed, the hard limit is \(limit.rlim_max)")
        }
        limit.rlim_cur = rlim_t(count)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #endif
    }
}

/// Live connections as bare sockets: the least a client can hold.
enum LiveSockets {
    /// Opens `count` connections to 127.0.0.1:`port`, each `GET /sync/live` with `Bearer token`,
    /// and returns their descriptors once each has read the answer's first event (on a thread of
    /// its own: the reads block).
    static func open(_ count: Int, port: UInt16, token: String) async throws -> [Int32] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var sockets: [Int32] = []
                do {
                    for _ in 0..<count { sockets.append(try connect(port: port, token: token)) }
                    continuation.resume(returning: sockets)
                } catch {
                    close(sockets)
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// One connection, blocking, until its first event arrived (5 s at most).
    static func connect(port: UInt16, token: String) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ValidationError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw ValidationError("connect: errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET /sync/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n"
        let sent = request.withCString { send(fd, $0, strlen($0), 0) }
        guard sent == strlen(request) else { Glibc.close(fd); throw ValidationError("send: errno \(errno)") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !String(decoding: received, as: UTF8.self).contains(": listening") {
            let read = recv(fd, &buffer, buffer.count, 0)
            guard read > 0 else {
                Glibc.close(fd)
                throw ValidationError("the live route answered no event: \(String(decoding: received.prefix(300), as: UTF8.self))")
            }
            received += buffer[0..<read]
        }
        return fd
        #else
        throw ValidationError("bare sockets: Linux only")
        #endif
    }

    /// Closes `sockets`.
    static func close(_ sockets: [Int32]) {
        #if canImport(Glibc)
        for fd in sockets { Glibc.close(fd) }
        #endif
    }
}
