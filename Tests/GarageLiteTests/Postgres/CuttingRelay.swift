import Foundation
#if canImport(Glibc)
import Glibc
private let noSignal = Int32(MSG_NOSIGNAL)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let noSignal: Int32 = 0
private let streamSocket = SOCK_STREAM
#endif

/// A TCP relay on 127.0.0.1 between a garage and the tests' PostgreSQL server that cuts a
/// connection at a chosen point of PostgreSQL's wire protocol: before it forwards a given
/// statement to the server, or once the server has answered it and before the answer reaches the
/// garage. A connection cut is closed on both sides; the connections made after it are relayed
/// whole. Blocking sockets, two threads a connection: the test process needs no event loop.
final class CuttingRelay: @unchecked Sendable {
    /// Where to cut, once a statement matches.
    enum Point {
        /// Before the statement reaches the server.
        case beforeForwarding
        /// The statement reaches the server; its answer (a `CommandComplete` with this tag, such as
        /// `COMMIT`) doesn't reach the garage.
        case afterAnswer(tag: String)
    }

    /// The cut to make: on the first connection that sends a statement matching `after` (when
    /// given), then one matching `at`.
    private struct Trigger {
        var after: ((String) -> Bool)?
        var at: (String) -> Bool
        var point: Point
    }

    /// The port it listens on, on 127.0.0.1.
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var trigger: Trigger?
    private var cuts = 0
    private var sockets: Set<Int32> = []
    private var isStopped = false

    /// Starts relaying to the server of `url` (a `postgres://` URL on 127.0.0.1).
    init(upstream url: String) throws {
        guard let components = URLComponents(string: url), components.host == "127.0.0.1", let port = components.port else {
            throw RelayFailure("the relay needs a server on 127.0.0.1: \(url)")
        }
        upstreamPort = port
        let listener = socket(AF_INET, streamSocket, 0)
        self.listener = listener
        var address = Self.loopback(port: 0)
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, size) == 0 && listen(listener, 16) == 0 && getsockname(listener, address, &size) == 0
            }
        }
        guard listener >= 0, bound else { throw RelayFailure("the relay can't listen: errno \(errno)") }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let accepting = Thread { [self] in acceptConnections() }
        accepting.start()
    }

    /// `url` with this relay's port: a garage opened on it connects through the relay.
    func relayed(_ url: String) -> String {
        var components = URLComponents(string: url)!
        components.port = port
        return components.string!
    }

    /// Cuts the next connection that sends a statement whose SQL matches `at` (after one that
    /// matches `after`, when given), at `point`; once.
    func cut(after: ((String) -> Bool)? = nil, at: @escaping (String) -> Bool, _ point: Point) {
        lock.withLock { trigger = Trigger(after: after, at: at, point: point) }
    }

    /// How many connections it cut.
    var cutCount: Int { lock.withLock { cuts } }

    /// Stops listening (a connection to its port is refused from now on) and closes every
    /// connection.
    func stop() {
        let (open, wasStopped) = lock.withLock {
            defer { isStopped = true }
            return (sockets, isStopped)
        }
        guard !wasStopped else { return }
        // The shutdown wakes the thread waiting in accept, which then ends.
        _ = shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in open { _ = shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        _ = inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        return address
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, streamSocket, 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            let accepted = lock.withLock { () -> Bool in
                guard !isStopped, connected else { return false }
                sockets.formUnion([client, server])
                return true
            }
            guard accepted else {
                close(client)
                close(server)
                if lock.withLock({ isStopped }) { return }
                continue
            }
            let connection = RelayedConnection(relay: self, client: client, server: server)
            Thread { connection.pumpFromClient() }.start()
            Thread { connection.pumpFromServer() }.start()
        }
    }

    /// The trigger, for a connection that sent `sql` (`sawAfter`: it sent the `after` statement
    /// before): whether to cut it, and where; `sawAfter` is updated.
    fileprivate func check(_ sql: String, sawAfter: inout Bool) -> Point? {
        lock.withLock {
            guard let trigger else { return nil }
            if let after = trigger.after, !sawAfter {
                if after(sql) { sawAfter = true }
                return nil
            }
            guard trigger.at(sql) else { return nil }
            self.trigger = nil
            return trigger.point
        }
    }

    /// Closes both sockets of a connection (the pumps' reads end), counted as a cut when `isCut`.
    fileprivate func end(_ client: Int32, _ server: Int32, isCut: Bool) {
        lock.withLock {
            if isCut { cuts += 1 }
        }
        _ = shutdown(client, Int32(SHUT_RDWR))
        _ = shutdown(server, Int32(SHUT_RDWR))
    }

    /// Forgets and closes a connection's sockets, once both its pumps ended.
    fileprivate func release(_ client: Int32, _ server: Int32) {
        lock.withLock { sockets.subtract([client, server]) }
        close(client)
        close(server)
    }
}

struct RelayFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One relayed connection: the garage's socket, the server's, and what the relay read of the
/// protocol on each (messages are a type byte and a length; the client's first is a startup
/// message, without the type).
private final class RelayedConnection: @unchecked Sendable {
    private let relay: CuttingRelay
    private let client: Int32
    private let server: Int32
    private let lock = NSLock()
    /// The SQL of the connection's prepared statements, by name ("" is the unnamed one).
    private var statements: [String: String] = [:]
    /// Whether the client sent the trigger's `after` statement.
    private var sawAfter = false
    /// Set once the statement to answer was forwarded: the server's messages are held back, and
    /// the connection is cut when a `CommandComplete` with this tag comes.
    private var holdingUntil: String?
    private var pumpsRunning = 2

    init(relay: CuttingRelay, client: Int32, server: Int32) {
        self.relay = relay
        self.client = client
        self.server = server
    }

    func pumpFromClient() {
        var pending: [UInt8] = []
        var inStartup = true
        relaying: while let bytes = read(client) {
            pending += bytes
            var forward: [UInt8] = []
            var start = 0
            while true {
                if inStartup {
                    guard let length = Self.int32(pending, start), pending.count >= start + length else { break }
                    let code = Self.int32(pending, start + 4) ?? 0
                    // An SSL or GSS encryption request is answered with one byte; a startup message follows.
                    if code != 80_877_103 && code != 80_877_104 { inStartup = false }
                    forward += pending[start..<start + length]
                    start += length
                    continue
                }
                guard pending.count >= start + 5, let length = Self.int32(pending, start + 1),
                      pending.count >= start + 1 + length else { break }
                let message = Array(pending[start..<start + 1 + length])
                start += 1 + length
                if let sql = statement(of: message), let point = lock.withLock({ relay.check(sql, sawAfter: &sawAfter) }) {
                    switch point {
                    case .beforeForwarding:
                        write(server, forward)
                        relay.end(client, server, isCut: true)
                        break relaying
                    case .afterAnswer(let tag):
                        lock.withLock { holdingUntil = tag }
                    }
                }
                forward += message
            }
            pending.removeFirst(start)
            guard write(server, forward) else { break }
        }
        relay.end(client, server, isCut: false)
        finish()
    }

    func pumpFromServer() {
        // (The tests' URLs say sslmode=disable: the server's first bytes are a message.)
        var pending: [UInt8] = []
        while let bytes = read(server) {
            pending += bytes
            var forward: [UInt8] = []
            var start = 0
            while true {
                guard pending.count >= start + 5, let length = Self.int32(pending, start + 1),
                      pending.count >= start + 1 + length else { break }
                let message = Array(pending[start..<start + 1 + length])
                start += 1 + length
                if let tag = lock.withLock({ holdingUntil }) {
                    if message[0] == UInt8(ascii: "C"), Self.text(message, from: 5) == tag {
                        relay.end(client, server, isCut: true)
                        finish()
                        return
                    }
                    continue
                }
                forward += message
            }
            pending.removeFirst(start)
            guard write(client, forward) else { break }
        }
        relay.end(client, server, isCut: false)
        finish()
    }

    /// The SQL a client's message runs: the statement a `Bind` binds, a `Query`'s. (A `Parse`
    /// only prepares: its statement's name is noted.)
    private func statement(of message: [UInt8]) -> String? {
        switch message[0] {
        case UInt8(ascii: "P"):
            let name = Self.text(message, from: 5) ?? ""
            let sql = Self.text(message, from: 5 + name.utf8.count + 1) ?? ""
            lock.withLock { statements[name] = sql }
            return nil
        case UInt8(ascii: "B"):
            let portal = Self.text(message, from: 5) ?? ""
            let name = Self.text(message, from: 5 + portal.utf8.count + 1) ?? ""
            return lock.withLock { statements[name] }
        case UInt8(ascii: "Q"):
            return Self.text(message, from: 5)
        default:
            return nil
        }
    }

    private func finish() {
        let last = lock.withLock {
            pumpsRunning -= 1
            return pumpsRunning == 0
        }
        if last { relay.release(client, server) }
    }

    private func read(_ socket: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Array(buffer[0..<count])
    }

    @discardableResult
    private func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, noSignal) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private static func int32(_ bytes: [UInt8], _ at: Int) -> Int? {
        guard bytes.count >= at + 4 else { return nil }
        return Int(Int32(bigEndian: bytes[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }))
    }

    /// The zero-terminated string at `from`.
    private static func text(_ bytes: [UInt8], from: Int) -> String? {
        guard from <= bytes.count, let end = bytes[from...].firstIndex(of: 0) else { return nil }
        return String(decoding: bytes[from..<end], as: UTF8.self)
    }
}
