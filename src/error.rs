//! Errors: MPI error classes and the crate's own argument checks.
//!
//! Every MPI call in the crate goes through one path, [`check`]`(rc, "operation")?`, which turns a
//! non-success return code into [`ErrorKind::Mpi`] with the error class (mapped from the
//! constants of the installed `mpi.h`, never from literal numbers), the raw code,
//! `MPI_Error_string`'s message and the operation's name. Errors the crate detects before calling MPI (ranks, tags, counts,
//! buffer sizes, threads) are their own variants.
//!
//! `MPI_ERRORS_RETURN` is installed on `MPI_COMM_WORLD`, `MPI_COMM_SELF` and every communicator the
//! crate creates, so MPI reports errors instead of aborting (MPI-4.0 §9.3).

use crate::ffi;
use crate::gate::{self, Refusal, ThreadLevel};
use std::ffi::c_int;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong: an [`Error`]'s kind, with the details of each kind ([`Error::kind`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// MPI returned an error code.
    #[error("{operation}: MPI error {class:?} (code {code}): {message}")]
    Mpi {
        /// The crate operation that made the failing call, such as `"send"`.
        operation: &'static str,
        /// The error class of `code` (`MPI_Error_class`).
        class: ErrorClass,
        /// The raw error code MPI returned.
        code: i32,
        /// `MPI_Error_string` of `code`.
        message: String,
    },
    /// A rank argument is outside the communicator or group.
    #[error("{operation}: {role} rank {rank} is not in 0..{size}")]
    InvalidRank {
        /// The operation.
        operation: &'static str,
        /// What the rank is used as: `"destination"`, `"source"`, `"root"`, `"group"`.
        role: &'static str,
        /// The rank passed.
        rank: i32,
        /// The size of the communicator or group.
        size: i32,
    },
    /// A tag is negative or above the `MPI_TAG_UB` attribute of this MPI.
    #[error("{operation}: tag {tag} is not in 0..={max} (MPI_TAG_UB)")]
    InvalidTag {
        /// The operation.
        operation: &'static str,
        /// The tag passed.
        tag: i32,
        /// `MPI_TAG_UB`.
        max: i32,
    },
    /// An element count does not fit the `int` the MPI call takes.
    #[error("{operation}: {count} elements do not fit an MPI count (at most {max})")]
    CountOverflow {
        /// The operation.
        operation: &'static str,
        /// The count, in elements of the MPI datatype (`u64::MAX` where it does not fit even
        /// that, or is unknown).
        count: u64,
        /// The largest count the call accepts.
        max: i64,
    },
    /// A buffer's length does not match what the operation needs.
    #[error("{operation}: buffer has {actual} elements, {expected} needed")]
    BufferSize {
        /// The operation.
        operation: &'static str,
        /// What the operation needs.
        expected: usize,
        /// What the buffer has.
        actual: usize,
    },
    /// MPI was called from a thread the provided thread level does not allow.
    #[error(
        "{operation}: MPI was initialised with {provided:?}, which allows MPI calls only from the \
         thread that initialised it; request ThreadLevel::Serialized or Multiple to use other threads"
    )]
    WrongThread {
        /// The operation.
        operation: &'static str,
        /// The thread level MPI provided.
        provided: ThreadLevel,
    },
    /// In checked mode, the ranks of a collective passed arguments that do not match (see
    /// [`comm::agreement`](crate::comm::agreement)); every rank gets this, and nothing started.
    #[error("{operation}: {reason} (checked collectives)")]
    CollectiveMismatch {
        /// The operation.
        operation: &'static str,
        /// What differs.
        reason: String,
    },
    /// MPI was called from inside a callback MPI is making (a [`UserOp`](crate::UserOp)'s
    /// closure), where the standard forbids MPI calls (MPI-4.0 §6.9.5).
    #[error(
        "{operation}: called from inside a user-defined reduction, where MPI forbids MPI calls"
    )]
    InCallback {
        /// The operation.
        operation: &'static str,
    },
    /// MPI is not initialised (yet): the call was not made.
    #[error("MPI is not initialised in this process")]
    NotInitialized,
    /// [`Mpi::init`](crate::Mpi::init) was called while MPI is initialised.
    #[error("MPI is already initialised in this process")]
    AlreadyInitialized,
    /// MPI has been finalized: [`Mpi::init`](crate::Mpi::init) cannot restart it, and nothing
    /// that needs MPI (an error lookup, [`Status::count`](crate::Status::count)) can run.
    #[error("MPI has been finalized in this process")]
    AlreadyFinalized,
    /// The calling process is not a member of the group the operation needs it in.
    #[error("{operation}: the calling process is not a member of the group")]
    NotInGroup {
        /// The operation.
        operation: &'static str,
    },
    /// A typed message could not be encoded or decoded (feature `serde`).
    #[error("{operation}: {reason}")]
    Codec {
        /// The operation.
        operation: &'static str,
        /// What the encoder or decoder said.
        reason: String,
    },
    /// A one-sided call would reach outside the target's window (checked before MPI is
    /// called, MPI-4.0 §12.3).
    #[error(
        "{operation}: elements {index}..{index}+{len} are outside target {target}'s window of {window_len}"
    )]
    OutOfBounds {
        /// The operation.
        operation: &'static str,
        /// The target rank.
        target: i32,
        /// The first element asked for.
        index: usize,
        /// How many elements.
        len: usize,
        /// The target window's length in elements.
        window_len: usize,
    },
    /// A window call made in the wrong epoch on this process: an epoch inside another, a
    /// `flush` outside a passive epoch, a target other than the locked one.
    #[error("{operation}: {reason}")]
    EpochMisuse {
        /// The operation.
        operation: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The processes of a shared window did not enter the same epoch (one reads while
    /// another writes). Detected on every process before any memory is touched; the window
    /// refuses every later epoch.
    #[error("{operation}: processes disagree on the shared window's epoch: {reason}")]
    EpochMismatch {
        /// The operation.
        operation: &'static str,
        /// Which processes announced what.
        reason: String,
    },
    /// A shared-memory window was asked for on a communicator whose processes cannot share
    /// memory (they span nodes).
    #[error(
        "{operation}: the communicator's {size} processes do not share memory (this node has {node} of them); use split_shared"
    )]
    NotSharedMemory {
        /// The operation.
        operation: &'static str,
        /// Processes in the communicator.
        size: i32,
        /// Of them, on this process's node.
        node: i32,
    },
    /// The node's memory cannot hold what was asked for: a shared window larger than the free
    /// room of the file system the MPI backs shared windows with (`/dev/shm`), or a segment
    /// the kernel could not back with memory (touching it would raise `SIGBUS`). Detected
    /// before any memory is touched, and the same on every process of the window.
    #[error("{operation}: not enough memory: {reason}")]
    NoMemory {
        /// The operation.
        operation: &'static str,
        /// What was asked for, and what was there.
        reason: String,
    },
    /// A variable of the environment (one the launcher or Slurm set) is malformed.
    #[error("{variable}={value:?}: {reason}")]
    Environment {
        /// The variable's name, such as `SLURM_TASKS_PER_NODE`.
        variable: String,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The installed MPI does not offer what was asked (a split type it was built without).
    #[error("{operation}: {reason}")]
    Unsupported {
        /// The operation.
        operation: &'static str,
        /// What is missing, and what to use instead.
        reason: String,
    },
    /// The GPU driver is missing or failed (see [`gpu`](crate::gpu)): `libcuda.so.1` could not
    /// be loaded, a device or its memory could not be had, or a copy failed.
    #[error("{operation}: {reason}")]
    Device {
        /// The operation or driver function.
        operation: &'static str,
        /// What failed, with the driver's message.
        reason: String,
    },
    /// A file operation failed (MPI-4.0 chapter 14): MPI's error on the file, the processes
    /// opening it with different access modes, or a transfer MPI reported as done that moved
    /// fewer bytes than asked (a full disk, on some MPIs). `class` is MPI's class (for the
    /// crate's own findings: [`ErrorClass::NotSame`] for the modes, [`ErrorClass::Io`] for a
    /// short write); [`Error::class`] returns it too.
    #[error("{operation} {path:?}: {class:?}: {message}")]
    File {
        /// The operation, such as `"file_open"`.
        operation: &'static str,
        /// The file's path, as opened.
        path: String,
        /// The error class.
        class: ErrorClass,
        /// The raw error code MPI returned (the class's own code for the crate's findings).
        code: i32,
        /// `MPI_Error_string` of the code, or what the crate found.
        message: String,
    },
    /// Any other argument the crate rejects before calling MPI.
    #[error("{operation}: {reason}")]
    InvalidArgument {
        /// The operation.
        operation: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// Everything that can go wrong in ferrompi: an [`ErrorKind`] with its details, behind one
/// pointer.
///
/// One word wide, so that a `Result<T>` is no wider than `T` and a word: every fallible call
/// hands its value back as cheaply as it would without errors (an error as wide as its
/// largest kind, 72 bytes, would make every `Result` as wide, and its moves would cost a
/// nonblocking collective and its `wait` 7 instructions, an owned request 27 to 36). The
/// details are on the heap, allocated only when something went wrong.
///
/// Match on [`kind`](Error::kind); compare with an [`ErrorKind`] directly:
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use ferrompi::ErrorKind;
/// let err = world.send(&[1u8], world.size(), 0).unwrap_err(); // no such rank
/// match err.kind() {
///     ErrorKind::InvalidRank { rank, size, .. } => assert_eq!(rank, size),
///     other => panic!("{other}"),
/// }
/// assert!(matches!(err.kind(), ErrorKind::InvalidRank { role: "destination", .. }));
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// Errors are counted while they live: an error still alive when [`Mpi`](crate::Mpi) drops is
/// one being returned (from `main`, say), and ends the job with its message (see
/// [`InitOptions::abort_on_error`](crate::InitOptions::abort_on_error)).
#[derive(PartialEq, Eq)]
pub struct Error(Box<Counted>);

/// An [`Error`]'s kind, counted among the errors alive while it lives: made only by
/// [`Error::new`], uncounted by its drop, out of line (the error path's).
#[derive(PartialEq, Eq)]
struct Counted(ErrorKind);

impl Error {
    /// What went wrong, with its details.
    #[must_use]
    pub fn kind(&self) -> &ErrorKind {
        &self.0.0
    }

    /// The kind, taken out of the error.
    #[must_use]
    pub fn into_kind(mut self) -> ErrorKind {
        std::mem::replace(&mut self.0.0, ErrorKind::NotInitialized)
    }

    /// Boxes `kind` and counts the error alive.
    #[cold]
    #[inline(never)]
    fn new(kind: ErrorKind) -> Error {
        let error = Error(Box::new(Counted(kind)));
        let mut alive = ALIVE.lock().unwrap_or_else(|e| e.into_inner());
        alive.count += 1;
        alive.newest = error.address();
        error
    }

    fn address(&self) -> usize {
        std::ptr::from_ref::<Counted>(&self.0).expose_provenance()
    }
}

/// The errors alive, and the address of the newest of them while it lives (zero otherwise).
struct Alive {
    count: usize,
    newest: usize,
}

/// Every [`Error`] alive: counted when made, uncounted when dropped, under this lock (on the
/// error path only), so that [`alive`] can read the newest error while no drop can free it.
static ALIVE: std::sync::Mutex<Alive> = std::sync::Mutex::new(Alive {
    count: 0,
    newest: 0,
});

/// The message of an error alive now (the newest, if it still lives), or `None` if none is.
pub(crate) fn alive() -> Option<String> {
    let alive = ALIVE.lock().unwrap_or_else(|e| e.into_inner());
    if alive.count == 0 {
        return None;
    }
    if alive.newest == 0 {
        return Some(format!("{} error(s) alive", alive.count));
    }
    let newest = std::ptr::with_exposed_provenance::<Counted>(alive.newest);
    // SAFETY: `newest` is the address of a live error's box: an error clears it under this
    // lock before its box is freed (`Drop for Counted`), and this lock is held here.
    Some(unsafe { &*newest }.0.to_string())
}

impl Drop for Counted {
    #[cold]
    #[inline(never)]
    fn drop(&mut self) {
        let address = std::ptr::from_ref::<Counted>(self).expose_provenance();
        let mut alive = ALIVE.lock().unwrap_or_else(|e| e.into_inner());
        alive.count = alive.count.saturating_sub(1);
        if alive.newest == address {
            alive.newest = 0;
        }
    }
}

impl Clone for Error {
    fn clone(&self) -> Error {
        Error::new(self.0.0.clone())
    }
}

impl From<ErrorKind> for Error {
    /// Boxes the kind (the only allocation an error makes).
    #[cold]
    fn from(kind: ErrorKind) -> Error {
        Error::new(kind)
    }
}

impl PartialEq<ErrorKind> for Error {
    fn eq(&self, other: &ErrorKind) -> bool {
        self.0.0 == *other
    }
}

impl std::fmt::Debug for Error {
    /// The kind's `Debug`: what `unwrap` and `main`'s `Err` print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0.0, f)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0.0, f)
    }
}

impl std::error::Error for Error {}

/// What is wrong with a string given to one of the crate's parsers (Slurm's variables, Linux's
/// CPU lists): never a panic, whatever the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(String);

impl ParseError {
    pub(crate) fn new(reason: impl Into<String>) -> ParseError {
        ParseError(reason.into())
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

impl Error {
    /// The MPI error class, for [`ErrorKind::Mpi`]; `None` for errors the crate detected itself.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let err = world.send(&[1u8], world.size(), 0).unwrap_err(); // no such rank
    /// assert!(matches!(err.kind(), ferrompi::ErrorKind::InvalidRank { .. }));
    /// assert_eq!(err.class(), None); // caught before MPI; MPI's own errors have a class
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn class(&self) -> Option<ErrorClass> {
        match self.kind() {
            ErrorKind::Mpi { class, .. } | ErrorKind::File { class, .. } => Some(*class),
            _ => None,
        }
    }

    /// Whether the thread gate refused the operation, so MPI was never called: an operation
    /// that was in flight before is still in flight.
    pub(crate) fn mpi_not_called(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::WrongThread { .. }
                | ErrorKind::InCallback { .. }
                | ErrorKind::NotInitialized
                | ErrorKind::AlreadyFinalized
        )
    }

    /// Builds [`ErrorKind::Mpi`] from a return code, asking MPI for its class and message when MPI
    /// may be called: while it runs, from a thread the thread level allows, outside callbacks.
    /// Otherwise MPI is not called (Open MPI aborts on `MPI_Error_string` after finalize): the
    /// class is the code itself when it names one (every error class is also an error code,
    /// MPI-4.0 §9.4), and the message says why it is missing.
    #[cold]
    #[inline(never)]
    pub(crate) fn from_code(code: c_int, operation: &'static str) -> Error {
        let (class, message) = match gate::enter("error_string") {
            Ok(_gate) => (error_class(code), error_string(code)),
            Err(refused) => (
                code,
                format!(
                    "MPI error code {code} (its message could not be asked for: {})",
                    Error::from(refused)
                ),
            ),
        };
        ErrorKind::Mpi {
            operation,
            class: ErrorClass::from_raw(class),
            code,
            message,
        }
        .into()
    }
}

impl From<Refusal> for Error {
    fn from(refused: Refusal) -> Error {
        let kind = match refused {
            Refusal::NotInitialized => ErrorKind::NotInitialized,
            Refusal::AlreadyFinalized => ErrorKind::AlreadyFinalized,
            Refusal::WrongThread {
                operation,
                provided,
            } => ErrorKind::WrongThread {
                operation,
                provided,
            },
            Refusal::InCallback { operation } => ErrorKind::InCallback { operation },
        };
        kind.into()
    }
}

/// `MPI_Error_class` of a code, or the code itself when MPI does not know it. The caller holds
/// the gate.
fn error_class(code: c_int) -> c_int {
    let mut class = code;
    // SAFETY: `MPI_Error_class` writes one int through a valid pointer; an unknown code
    // makes it return an error, in which case `class` keeps the code itself.
    let rc = unsafe { ffi::MPI_Error_class(code, &mut class) };
    if rc == ffi::MPI_SUCCESS { class } else { code }
}

/// `MPI_Error_string` of a code, or a placeholder when MPI does not know it. The caller holds
/// the gate.
fn error_string(code: c_int) -> String {
    let mut buf = vec![
        0u8;
        usize::try_from(ffi::MPI_MAX_ERROR_STRING)
            .unwrap_or(0)
            .max(1)
    ];
    let mut len: c_int = 0;
    // SAFETY: `buf` has room for MPI_MAX_ERROR_STRING bytes, as MPI_Error_string requires.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    if rc != ffi::MPI_SUCCESS {
        return format!("unknown MPI error code {code}");
    }
    string_from_buffer(&buf, len)
}

/// A string MPI wrote into `buf` with length `len`, stopping at the first NUL.
pub(crate) fn string_from_buffer(buf: &[u8], len: c_int) -> String {
    let len = usize::try_from(len).unwrap_or(0).min(buf.len());
    let bytes = &buf[..len];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Converts an MPI return code to a `Result`: the one path from return codes to [`Error`].
///
/// Public so that code calling [`ffi`](mod@crate::ffi) directly reports errors the same way:
/// `check(unsafe { ffi::MPI_Barrier(comm.as_raw()) }, "my barrier")?`. Safe at any time: it asks
/// MPI for the error's class and message only while MPI runs and the thread level allows the
/// calling thread to call it, and never from inside a reduction callback.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// // The one path from an MPI return code to an `Error`, for calls made through `ffi`.
/// let mut flag = 0;
/// // SAFETY: MPI_Initialized may be called at any time and writes one int.
/// ferrompi::check(unsafe { ferrompi::ffi::MPI_Initialized(&mut flag) }, "initialized")?;
/// assert_eq!(flag, 1);
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::Mpi`] for any code other than `MPI_SUCCESS`.
#[inline(always)]
pub fn check(rc: c_int, operation: &'static str) -> Result<()> {
    if rc == ffi::MPI_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_code(rc, operation))
    }
}

macro_rules! error_classes {
    ($( $(#[$cfg:meta])* $variant:ident = $konst:ident, $doc:literal; )*) => {
        /// MPI error classes (MPI-4.0 §9.4), mapped from the installed `mpi.h`.
        ///
        /// The numeric values differ between implementations (`MPI_ERR_TRUNCATE` is 15 in Open MPI
        /// and 14 in MPICH); [`ErrorClass::raw`] gives the value of the MPI this crate was built with.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorClass {
            $( $(#[$cfg])* #[doc = $doc] $variant, )*
            /// A class this crate does not name (implementation-specific or user-defined).
            Unlisted(i32),
        }

        impl ErrorClass {
            /// Every named class, in declaration order.
            pub const ALL: &'static [ErrorClass] = &[ $( $(#[$cfg])* ErrorClass::$variant, )* ];

            /// The class for a raw class number of the installed MPI.
            ///
            /// ```
            /// use ferrompi::ErrorClass;
            /// let raw = ErrorClass::Truncate.raw(); // MPI_ERR_TRUNCATE of this MPI
            /// assert_eq!(ErrorClass::from_raw(raw), ErrorClass::Truncate);
            /// assert!(matches!(ErrorClass::from_raw(-7), ErrorClass::Unlisted(-7)));
            /// ```
            pub fn from_raw(class: i32) -> ErrorClass {
                match class {
                    $( $(#[$cfg])* ffi::$konst => ErrorClass::$variant, )*
                    other => ErrorClass::Unlisted(other),
                }
            }

            /// The raw class number in the installed MPI.
            ///
            /// ```
            /// use ferrompi::ErrorClass;
            /// assert_ne!(ErrorClass::Rank.raw(), ErrorClass::Tag.raw());
            /// ```
            pub fn raw(self) -> i32 {
                match self {
                    $( $(#[$cfg])* ErrorClass::$variant => ffi::$konst, )*
                    ErrorClass::Unlisted(class) => class,
                }
            }
        }
    };
}

error_classes! {
    Buffer = MPI_ERR_BUFFER, "Invalid buffer pointer.";
    Count = MPI_ERR_COUNT, "Invalid count argument.";
    Type = MPI_ERR_TYPE, "Invalid datatype argument.";
    Tag = MPI_ERR_TAG, "Invalid tag argument.";
    Comm = MPI_ERR_COMM, "Invalid communicator.";
    Rank = MPI_ERR_RANK, "Invalid rank.";
    Request = MPI_ERR_REQUEST, "Invalid request (handle).";
    Root = MPI_ERR_ROOT, "Invalid root.";
    Group = MPI_ERR_GROUP, "Invalid group.";
    Op = MPI_ERR_OP, "Invalid operation.";
    Topology = MPI_ERR_TOPOLOGY, "Invalid topology.";
    Dims = MPI_ERR_DIMS, "Invalid dimension argument.";
    Arg = MPI_ERR_ARG, "Invalid argument of some other kind.";
    Unknown = MPI_ERR_UNKNOWN, "Unknown error.";
    Truncate = MPI_ERR_TRUNCATE, "Message truncated on receive.";
    Other = MPI_ERR_OTHER, "Known error not in this list.";
    Intern = MPI_ERR_INTERN, "Internal MPI (implementation) error.";
    InStatus = MPI_ERR_IN_STATUS, "Error code is in status.";
    Pending = MPI_ERR_PENDING, "Pending request.";
    Keyval = MPI_ERR_KEYVAL, "Invalid keyval has been passed.";
    NoMem = MPI_ERR_NO_MEM, "MPI_ALLOC_MEM failed because memory is exhausted.";
    Base = MPI_ERR_BASE, "Invalid base passed to MPI_FREE_MEM.";
    InfoKey = MPI_ERR_INFO_KEY, "Key longer than MPI_MAX_INFO_KEY.";
    InfoValue = MPI_ERR_INFO_VALUE, "Value longer than MPI_MAX_INFO_VAL.";
    InfoNokey = MPI_ERR_INFO_NOKEY, "Invalid key passed to MPI_INFO_DELETE.";
    Spawn = MPI_ERR_SPAWN, "Error in spawning processes.";
    Port = MPI_ERR_PORT, "Invalid port name.";
    Service = MPI_ERR_SERVICE, "Invalid service name.";
    Name = MPI_ERR_NAME, "Invalid service name in MPI_LOOKUP_NAME.";
    Win = MPI_ERR_WIN, "Invalid window argument.";
    Size = MPI_ERR_SIZE, "Invalid size argument.";
    Disp = MPI_ERR_DISP, "Invalid displacement argument.";
    Info = MPI_ERR_INFO, "Invalid info argument.";
    Locktype = MPI_ERR_LOCKTYPE, "Invalid locktype argument.";
    Assert = MPI_ERR_ASSERT, "Invalid assert argument.";
    RmaConflict = MPI_ERR_RMA_CONFLICT, "Conflicting accesses to window.";
    RmaSync = MPI_ERR_RMA_SYNC, "Invalid synchronization of RMA calls.";
    RmaRange = MPI_ERR_RMA_RANGE, "Target memory is not part of the window.";
    RmaAttach = MPI_ERR_RMA_ATTACH, "Memory cannot be attached.";
    RmaShared = MPI_ERR_RMA_SHARED, "Memory cannot be shared.";
    RmaFlavor = MPI_ERR_RMA_FLAVOR, "Passed window has the wrong flavor.";
    File = MPI_ERR_FILE, "Invalid file handle.";
    NotSame = MPI_ERR_NOT_SAME, "Collective argument not identical on all processes.";
    Amode = MPI_ERR_AMODE, "Error related to the amode passed to MPI_FILE_OPEN.";
    UnsupportedDatarep = MPI_ERR_UNSUPPORTED_DATAREP, "Unsupported datarep.";
    UnsupportedOperation = MPI_ERR_UNSUPPORTED_OPERATION, "Unsupported operation.";
    NoSuchFile = MPI_ERR_NO_SUCH_FILE, "File does not exist.";
    FileExists = MPI_ERR_FILE_EXISTS, "File exists.";
    BadFile = MPI_ERR_BAD_FILE, "Invalid file name.";
    Access = MPI_ERR_ACCESS, "Permission denied.";
    NoSpace = MPI_ERR_NO_SPACE, "Not enough space.";
    Quota = MPI_ERR_QUOTA, "Quota exceeded.";
    ReadOnly = MPI_ERR_READ_ONLY, "Read-only file or file system.";
    FileInUse = MPI_ERR_FILE_IN_USE, "File operation could not be completed: the file is in use.";
    DupDatarep = MPI_ERR_DUP_DATAREP, "Conversion functions already registered for this datarep.";
    Conversion = MPI_ERR_CONVERSION, "An error occurred in a user-supplied data conversion function.";
    Io = MPI_ERR_IO, "Other I/O error.";
    #[cfg(ferrompi_mpi4)]
    Session = MPI_ERR_SESSION, "Invalid session handle (MPI-4).";
    #[cfg(ferrompi_mpi4)]
    ProcAborted = MPI_ERR_PROC_ABORTED, "Operation failed because a peer process has aborted (MPI-4).";
    #[cfg(ferrompi_mpi4)]
    ValueTooLarge = MPI_ERR_VALUE_TOO_LARGE, "Value is too large to store (MPI-4).";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_mapping_round_trips_and_is_injective() {
        let mut seen = std::collections::HashSet::new();
        for &class in ErrorClass::ALL {
            assert_eq!(ErrorClass::from_raw(class.raw()), class, "{class:?}");
            assert!(
                seen.insert(class.raw()),
                "{class:?} shares its number with another class"
            );
            assert_ne!(
                class.raw(),
                ffi::MPI_SUCCESS,
                "{class:?} must not be MPI_SUCCESS"
            );
            assert!(
                class.raw() <= ffi::MPI_ERR_LASTCODE,
                "{class:?} is above MPI_ERR_LASTCODE"
            );
        }
    }

    #[test]
    fn class_numbers_are_the_installed_mpis() {
        // The two families number classes differently; the mapping must follow the header.
        #[cfg(ferrompi_family = "openmpi")]
        assert_eq!(ErrorClass::Truncate.raw(), 15);
        #[cfg(ferrompi_family = "mpich")]
        assert_eq!(ErrorClass::Truncate.raw(), 14);
        assert_eq!(ErrorClass::from_raw(ffi::MPI_ERR_RANK), ErrorClass::Rank);
        assert_eq!(ErrorClass::from_raw(-12345), ErrorClass::Unlisted(-12345));
    }

    /// An error is one pointer, so a `Result` is no wider than its value and a word: what
    /// keeps the request paths' moves out of the hot loops.
    #[test]
    fn an_error_is_one_word() {
        use std::mem::size_of;
        assert_eq!(size_of::<Error>(), size_of::<usize>());
        assert_eq!(size_of::<Result<()>>(), size_of::<usize>());
        let status = size_of::<crate::Status>().next_multiple_of(size_of::<usize>());
        assert!(size_of::<Result<crate::Status>>() <= status + size_of::<usize>());
    }

    /// The box is invisible: an error compares with its kind, and prints as its kind does.
    #[test]
    fn an_error_reads_as_its_kind() {
        let e = Error::from(ErrorKind::NotInitialized);
        assert_eq!(e, ErrorKind::NotInitialized);
        assert_eq!(e.kind(), &ErrorKind::NotInitialized);
        assert_eq!(format!("{e:?}"), "NotInitialized");
        assert_eq!(e.to_string(), "MPI is not initialised in this process");
        assert_eq!(e.clone().into_kind(), ErrorKind::NotInitialized);
        assert_eq!(e.class(), None);
    }

    #[test]
    fn check_passes_success_through() {
        assert_eq!(check(ffi::MPI_SUCCESS, "op"), Ok(()));
    }

    /// MPI is never initialised in the unit tests: looking up an error must not call it (Open
    /// MPI aborts the process on `MPI_Error_string` before `MPI_Init`).
    #[test]
    fn check_before_init_does_not_call_mpi() {
        let truncate = ErrorClass::Truncate.raw();
        let Err(ErrorKind::Mpi {
            class,
            code,
            message,
            operation,
        }) = check(truncate, "recv").map_err(Error::into_kind)
        else {
            panic!("an error code must give ErrorKind::Mpi");
        };
        assert_eq!(
            (class, code, operation),
            (ErrorClass::Truncate, truncate, "recv")
        );
        assert!(message.contains("not initialised"), "{message}");
    }
}
