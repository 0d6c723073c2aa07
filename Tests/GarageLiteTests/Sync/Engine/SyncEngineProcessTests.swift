import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

/// A server that takes every upload of `StressDocument`s, keeping the last one of each.
actor AcceptingServer {
    private(set) var documents: [String: StressDocument] = [:]
    private var version = 0

    func upload(_ batch: UploadBatch<StressDocument>) -> UploadResults<StressDocument> {
        var results = UploadResults<StressDocument>()
        for change in batch.changes {
            version += 1
            if let document = change.object { documents[change.identifier] = document } else { documents[change.identifier] = nil }
            results[change.identifier] = .accepted(version: String(version))
        }
        return results
    }
}

/// The transport to an `AcceptingServer`, which has nothing to download.
struct AcceptingTransport: SyncTransport {
    let server: AcceptingServer

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        guard let documents = batch as? UploadBatch<StressDocument> else { throw ScriptedServer.Failure(description: "not a document") }
        return await server.upload(documents) as! UploadResults<Object>
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        DownloadBatch(changes: [], cursor: nil)
    }
}

/// Issue 26: the engine syncs what another process edits. A `garage-stress-worker` editor edits
/// documents in the store (a file, or a schema on PostgreSQL), round after round, while an engine in this process runs on it:
/// the engine sees the other process's commits, claims while it edits (some edits land on
/// claimed rows, which complete as edited meanwhile, and are uploaded again), and the server
/// ends with the last version of every document.
@Suite("The sync engine and another process", .acrossProcesses)
struct SyncEngineProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func theEditsOfAnotherProcessAreUploaded() async throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.garage")
        let garage = try TestEngine.garage(path: path)
        let server = AcceptingServer()
        var configuration = SyncEngine.Configuration()
        configuration.debounce = 0.01
        configuration.pollInterval = nil
        configuration.batchSize = 4
        let engine = SyncEngine(garage: garage, transport: AcceptingTransport(server: server),
                                types: [.of(StressDocument.self)], configuration: configuration)
        let running = Task { await engine.run() }
        // Its first sync is done (nothing to upload): from now on, only observing finds the edits.
        #expect(await eventually { engine.status.lastSync != nil })
        let editor = try WorkerProcess(name: "editor", executable: worker,
                                       arguments: [path, "editor", "p", "12", "6"], directory: directory.url)
        #expect(editor.wait(timeout: 120))
        #expect(editor.exitedCleanly, "\(editor.outputText)")
        // The editor's last version of each document: `LAST <id> <version>`.
        let last = Dictionary(uniqueKeysWithValues: editor.outputLines(startingWith: "LAST").compactMap { line -> (String, Int)? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let version = Int(parts[2]) else { return nil }
            return (String(parts[1]), version)
        })
        #expect(last.count == 12)
        let uploaded = await eventually {
            let documents = await server.documents
            return last.allSatisfy { documents[$0.key]?.version == $0.value }
        }
        let versions = await server.documents.mapValues(\.version)
        #expect(uploaded, "the server has \(versions), the editor ended with \(last)")
        #expect(try await eventually { try await garage.count(StressDocument.self, withStatus: .synced) == 12 })
        running.cancel()
        await running.value
    }
}
