/// An object that carries the revision of its row, so that the garage refuses to park it
/// over a newer version: one retrieved before another writer (a sync job, another screen)
/// changed it.
///
/// ```swift
/// struct Note: Mappable, Revisioned {
///     var id: String
///     var text: String
///     var revision: Int64 = 0
/// }
///
/// var note = try garage.retrieve(Note.self, identifier: "n1")!   // revision set from the row
/// note.text = "Edited"
/// try garage.park(&note)       // refused if the row changed since; note.revision moves on
/// ```
///
/// The garage sets ``revision`` from the row on every retrieve (roots and the objects they
/// reference, claims and change streams too), and checks it on every park, in the transaction
/// that writes: an object whose revision is not its row's is refused with
/// ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``, and
/// nothing of the call is written. A revision of 0 means the object was not retrieved from
/// this store: it may be parked where no row is stored yet, and is refused over an existing
/// row (a blind overwrite). Objects from the server, parked with
/// ``Garage/parkDownloaded(_:onConflict:)-74tja``, are not checked.
///
/// Like a ``Syncable`` object's status, the revision lives in the row, not in the object's
/// JSON: changing it is not a change of content, and a `Hashable` object's identifier does
/// not depend on it. See <doc:ReferenceRule> for how children are checked.
///
/// With autosave off, or in a transaction, a park gives the copy a *provisional* revision (a
/// negative number no row ever has) until the change is saved: then the garage takes it for
/// the revision the row got, and the copy parks on. A copy whose change was discarded or rolled
/// back keeps a number no row has, and is refused as stale: it can never pass for another
/// writer's version.
///
/// A struct learns its new revision only through `park(&value)`: park a `Revisioned` struct
/// that way every time, its first park included. A copy parked with `park(value)` keeps its
/// old revision, and its next park is refused as stale. A class instance learns it on every
/// park.
public protocol Revisioned {
    /// The revision of the object's row when it was retrieved (or last parked through
    /// ``Garage/park(_:children:)-3a5in``); 0 when it was not retrieved from this store.
    var revision: Int64 { get set }
}


/// What parking an object does with the objects it references (its children), which are
/// parked as rows of their own: see ``Garage/park(_:children:)-3a5in``.
///
/// ```swift
/// try garage.park(notebook, children: .keepStored)   // a note changed since stays as stored
/// try garage.park(notebook, children: .onlyNew)      // only notes not stored yet are written
/// ```
///
/// The object parked itself (the root) is always checked when it is ``Revisioned``.
///
/// Whatever the option but ``ChildParking/all``, a child that is not an edit is never written over a newer
/// row: the garage remembers the versions it handed out (the JSON of each row it decoded, and
/// the row's revision then), and a child parked with the very JSON of such a version, whose row
/// has moved on since (a download from the server, another process, another screen's edit), is
/// left as stored, ``Revisioned`` or not, class or struct. A screen that holds last week's
/// notebook inside a note can park the note without undoing the notebook's rename. A child that
/// differs from every version handed out is an edit, and the option decides.
public enum ChildParking: Sendable, Hashable {
    /// The default: a ``Revisioned`` child whose revision is not its row's refuses the whole
    /// park with ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``;
    /// other children are written, as GarageStorage writes them.
    case refuseStale
    /// A ``Revisioned`` child whose row changed since it was retrieved (or, with revision 0,
    /// that is already stored) is left as stored, and the rest is written. A child deleted
    /// since it was retrieved has nothing stored to keep: it is refused as stale. Other
    /// children are written.
    case keepStored
    /// Only children that are not stored yet are written, ``Revisioned`` or not; every stored
    /// child is left as it is. The way to park a parent whose children are not `Revisioned`
    /// without writing them back.
    case onlyNew
    /// Every child is written, whatever its revision: GarageStorage's behaviour.
    case all
}
