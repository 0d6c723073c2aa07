#if canImport(JWTKit) && canImport(Hummingbird)
import Foundation
import GarageLite
import GarageLiteClient
import GarageLiteServer
import JWTKit
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 43: `garage-server`, the ready server, as a team runs it: a process on loopback serving
/// a store's types as records behind HS256 tokens, and devices (a struct model and a class model)
/// that reach it with `HTTPSyncTransport`, writing no server code and no transport. Then what
/// an attacker tries: forged, expired, unsigned and other-key tokens; another team's scope, cursor
/// and identifiers; hostile type names and identifiers. Each is refused, and nothing is read,
/// written or told.
@Suite("garage-server", .ownThreads, .acrossProcesses)
struct GarageServerProcessTests {
    struct ServedNote: Codable, Identifiable, Syncable, Sendable, Equatable {
        var id: String
        var team: String
        var title: String
        var syncStatus: SyncStatus = .notSynced
    }

    final class ServedNotebook: Codable, Identifiable, Syncable, @unchecked Sendable {
        var id: String
        var team: String
        var name: String
        var syncStatus: SyncStatus = .notSynced

        init(id: String, team: String, name: String) {
            self.id = id
            self.team = team
            self.name = name
        }
    }

    /// A running `garage-server` on the test engine's store of a path in `directory`, serving both models by their
    /// `team`; stopped (SIGTERM) by `stop()`.
    final class Server: Sendable {
        let process: ChildProcess
        let url: URL
        let storePath: String
        let output: URL
        let keys: JWTKeyCollection

        init(_ directory: TemporaryDirectory) async throws {
            let secret = "the test server's secret: thirty-two bytes and more"
            let secretPath = directory.path("secret")
            try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: secretPath))
            storePath = directory.path("server.garage")
            output = URL(fileURLWithPath: directory.path("server.log"))
            let executable = try #require(ToolProcess.builtExecutable(named: "garage-server"))
            process = try ChildProcess(executable: executable, arguments: [
                "--store", TestEngine.location(path: storePath), "--type", "ServedNote:team", "--type", "ServedNotebook:team",
                "--token-key-file", secretPath, "--port", "0",
            ], output: output)
            keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            // It prints the address once it listens (bounded: 2 minutes).
            var address: URL?
            for _ in 0..<1_200 where address == nil && process.isRunning {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("garage-server: serving") }),
                   let range = line.range(of: "http://") {
                    address = URL(string: String(line[range.lowerBound...]).replacingOccurrences(of: "/sync", with: ""))
                } else {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            url = try #require(address, "garage-server printed: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
        }

        func token(_ scopes: [String], expiring: TimeInterval = 3_600) async throws -> String {
            try await keys.sign(SyncTokensTests.claims("user-\(scopes.joined())", scopes: scopes, expiring: expiring))
        }

        /// A POST of `body` to `route` with `authorization`: the status and the answer's text.
        func post(_ route: String, body: String, authorization: String?) async throws -> (Int, String) {
            var request = URLRequest(url: url.appendingPathComponent("sync").appendingPathComponent(route))
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        func stop() -> ChildProcess.Termination? {
            process.kill(SIGTERM)
            if !process.wait(timeout: 60) { process.kill() }
            return process.ended
        }
    }

    static func device(_ server: Server, scopes: [String], in directory: TemporaryDirectory) async throws -> (Garage, SyncEngine) {
        let garage = try TestEngine.garage(path: directory.path("device-\(UUID().uuidString).garage"))
        let token = try await server.token(scopes)
        let transport = HTTPSyncTransport(servers: [server.url]) { token }
        return (garage, SyncEngine(garage: garage, transport: transport,
                                   types: [.of(ServedNotebook.self), .of(ServedNote.self)], configuration: SyncEngineTests.quick))
    }

    /// A JSON answer with its keys sorted, to compare answers whatever their members' order.
    static func normalized(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return json }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func devicesSyncThroughTheReadyServerAndItStopsGracefully() async throws {
        let directory = try TemporaryDirectory()
        let server = try await Server(directory)
        defer { _ = server.stop() }
        let (a, engineA) = try await Self.device(server, scopes: ["1"], in: directory)
        let (b, engineB) = try await Self.device(server, scopes: ["1"], in: directory)
        let (c, engineC) = try await Self.device(server, scopes: ["2"], in: directory)
        try await a.park(ServedNotebook(id: "book", team: "1", name: "Plans"))
        for index in 0..<4 { try await a.park(ServedNote(id: "n\(index)", team: "1", title: "note \(index)")) }
        try await c.park(ServedNote(id: "other", team: "2", title: "team 2's"))
        _ = try await engineA.sync()
        _ = try await engineC.sync()
        _ = try await engineB.sync()
        #expect(Set(try await b.retrieveAll(ServedNote.self).map(\.id)) == ["n0", "n1", "n2", "n3"])
        #expect(try await b.retrieve(ServedNotebook.self, identifier: "book")?.name == "Plans")
        // An edit and a deletion go from B to A.
        var note = try #require(try await b.retrieve(ServedNote.self, identifier: "n2"))
        note.title = "edited on B"
        try await b.park(note)
        _ = try await b.delete(ServedNote.self, identifier: "n3")
        _ = try await engineB.sync()
        _ = try await engineA.sync()
        #expect(try await a.retrieve(ServedNote.self, identifier: "n2")?.title == "edited on B")
        #expect(try await a.retrieve(ServedNote.self, identifier: "n3") == nil)
        // Team 2 sees its note only, team 1 never sees it.
        _ = try await engineC.sync()
        #expect(Set(try await c.retrieveAll(ServedNote.self).map(\.id)) == ["other"])
        #expect(try await a.retrieve(ServedNote.self, identifier: "other") == nil)
        // Issue 44: its metrics, in Prometheus's text, count what the devices did, and hold no
        // object's content.
        let (metrics, response) = try await URLSession.shared.data(from: server.url.appendingPathComponent("metrics"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains(#"garage_sync_objects_uploaded_total{type="ServedNote",result="accepted"} 7"#))
        #expect(!text.contains("edited on B"))
        #expect(server.stop() == .exit(0))
    }

    @Test func whatAnAttackerTriesIsRefusedAndTellsNothing() async throws {
        let directory = try TemporaryDirectory()
        let server = try await Server(directory)
        defer { _ = server.stop() }
        let (owner, ownerEngine) = try await Self.device(server, scopes: ["2"], in: directory)
        try await owner.park(ServedNote(id: "secret-note", team: "2", title: "Secretmarker"))
        _ = try await ownerEngine.sync()
        let download = #"{"typeName":"ServedNote"}"#

        // No token, a forged one, an expired one, an unsigned one, one of another key.
        let good = try await server.token(["1"])
        let parts = good.split(separator: ".").map(String.init)
        let claims2 = String(decoding: try JSONEncoder().encode(SyncTokensTests.claims(scopes: ["2"])), as: UTF8.self)
        let forged = [parts[0], SyncTokensTests.base64URL(Data(claims2.utf8)), parts[2]].joined(separator: ".")
        let unsigned = SyncTokensTests.token(header: #"{"alg":"none","typ":"JWT"}"#, claims: claims2)
        let expired = try await server.token(["2"], expiring: -600)
        let otherKeys = await SyncTokensTests.hmacKeys("somebody else's secret of thirty-two bytes")
        let otherKey = try await otherKeys.sign(SyncTokensTests.claims(scopes: ["2"]))
        for authorization in [nil, "Bearer " + forged, "Bearer " + unsigned, "Bearer " + expired, "Bearer " + otherKey,
                              "Basic " + good, "Bearer"] as [String?] {
            for route in ["ServedNote/download", "ServedNote/upload"] {
                let (status, answer) = try await server.post(route, body: download, authorization: authorization)
                #expect(status == 401, "\(authorization ?? "nil") \(route): \(status) \(answer)")
                #expect(!answer.contains("Secretmarker") && !answer.contains("secret-note"))
            }
        }

        // Team 1's token: another team's cursor, objects, identifiers and scope.
        let bearer = "Bearer " + good
        let (status, answer) = try await server.post("ServedNote/download", body: #"{"typeName":"ServedNote","cursor":"{\"2\":0}"}"#,
                                                     authorization: bearer)
        #expect(status == 200)
        #expect(!answer.contains("Secretmarker") && !answer.contains("secret-note") && !answer.contains("\"2\""), "\(answer)")
        let intrusions = [
            // Into team 2, as a creation; over team 2's note, as a creation and as an edit; its deletion.
            #"{"typeName":"ServedNote","changes":[{"identifier":"new","object":{"id":"new","team":"2","title":"x"}}]}"#,
            #"{"typeName":"ServedNote","changes":[{"identifier":"secret-note","object":{"id":"secret-note","team":"1","title":"x"}}]}"#,
            #"{"typeName":"ServedNote","changes":[{"identifier":"secret-note","object":{"id":"secret-note","team":"1","title":"x"},"version":"1"}]}"#,
        ]
        var refusals = Set<String>()
        for body in intrusions {
            let (status, answer) = try await server.post("ServedNote/upload", body: body, authorization: bearer)
            #expect(status == 200)
            #expect(answer.contains("failed") && !answer.contains("Secretmarker") && !answer.contains("\"team\":\"2\""), "\(answer)")
            refusals.insert(Self.normalized(answer.replacingOccurrences(of: "secret-note", with: "new")))
        }
        #expect(refusals.count == 1, "\(refusals)")     // one answer, whether the object exists or not
        // Its deletion is answered as that of an object the server doesn't have, and deletes nothing.
        var deletions = Set<String>()
        for identifier in ["secret-note", "nothing-here"] {
            let (status, answer) = try await server.post("ServedNote/upload", body: #"{"typeName":"ServedNote","changes":[{"identifier":"\#(identifier)","version":"1"}]}"#,
                                                         authorization: bearer)
            #expect(status == 200)
            deletions.insert(Self.normalized(answer.replacingOccurrences(of: identifier, with: "x")))
        }
        #expect(deletions.count == 1, "\(deletions)")

        // Hostile type names and identifiers: not served, or refused; nothing written.
        for typeName in ["..%2F..%2Fetc", "ServedNote%00", "GarageLiteServer.ObjectState", "GarageLiteServer.FeedEntry",
                         "'%20OR%201%3D1", String(repeating: "T", count: 5_000)] {
            let (status, _) = try await server.post("\(typeName)/download", body: download, authorization: bearer)
            #expect(status == 404 || status == 400, "\(typeName): \(status)")
        }
        for identifier in ["", "\\u0000", "a\\u0000b", String(repeating: "i", count: 100_000)] {
            let body = #"{"typeName":"ServedNote","changes":[{"identifier":"\#(identifier)","object":{"id":"\#(identifier)","team":"1","title":"x"}}]}"#
            let (status, answer) = try await server.post("ServedNote/upload", body: body, authorization: bearer)
            #expect(status == 200 && answer.contains("failed") || status == 400 || status == 503, "\(identifier.prefix(20)): \(status) \(answer.prefix(200))")
        }
        let body = #"{"typeName":"ServedNote","changes":[{"identifier":"n","object":{"id":"n","team":"1","title":"x\u0000y"}}]}"#
        let (nulStatus, nulAnswer) = try await server.post("ServedNote/upload", body: body, authorization: bearer)
        #expect(nulStatus == 200 && nulAnswer.contains("failed") || nulStatus == 400 || nulStatus == 503, "\(nulStatus) \(nulAnswer)")

        // The store holds team 2's note as it was, and nothing the attacker sent.
        #expect(server.stop() == .exit(0))
        let store = try TestEngine.garage(path: server.storePath)
        let records = try await store.records(ofType: "ServedNote")
        #expect(records.map(\.identifier) == ["secret-note"])
        #expect(records.first?.json.contains("Secretmarker") == true)
    }

    @Test func itRefusesToStartWithoutKeysTypesOrStore() throws {
        let directory = try TemporaryDirectory()
        let executable = try #require(ToolProcess.builtExecutable(named: "garage-server"))
        let store = directory.path("s.garage")
        let secret = directory.path("secret")
        try Data("short".utf8).write(to: URL(fileURLWithPath: secret))
        for arguments in [["--store", store, "--type", "Note:team", "--port", "0"],
                          ["--store", store, "--token-key-file", secret, "--port", "0"],
                          ["--type", "Note:team", "--token-key-file", secret, "--port", "0"],
                          ["--store", store, "--type", "Note:team", "--token-key-file", secret, "--port", "0"],
                          ["--store", store, "--type", ":team", "--token-key-file", secret, "--port", "0"]] {
            let result = try ToolProcess.run(executable: executable, arguments, environment: [
                "GARAGE_SERVER_STORE": nil, "GARAGE_SERVER_TYPES": nil, "GARAGE_SERVER_TOKEN_KEY": nil, "GARAGE_SERVER_JWKS": nil,
            ], timeout: 60)
            #expect(result.exitCode != 0, "\(result)")
            #expect(!result.stderr.isEmpty && !result.stderr.contains("short"), "\(result)")
        }
        let merge = try ToolProcess.run(executable: executable, ["--store", store, "--type", "Note:team", "--merge", "bogus",
                                                                 "--token-key-file", secret, "--port", "0"],
                                        environment: ["GARAGE_SERVER_MERGE": nil], timeout: 60)
        #expect(merge.exitCode != 0 && merge.stderr.contains("is not a merge"), "\(merge)")
    }
}
#endif
